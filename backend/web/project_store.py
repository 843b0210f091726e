"""One store call in a project as the caller, on a pooled connection borrowed for that call alone.

The store's functions take the project and the caller (`project_id=`, `user_id=`) and check membership
in their SQL; routes pass the membership check's ProjectAccess and the call's own arguments. The
connection goes back to the pool when the call returns, before any model call, stream or upload."""

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from psycopg_pool import AsyncConnectionPool

from backend.deps import ProjectAccess

T = TypeVar("T")


async def as_member(
    db: AsyncConnectionPool, access: ProjectAccess, call: Callable[..., Awaitable[T]], /, **args: Any
) -> T:
    async with db.connection() as conn:
        return await call(conn, **access.scope, **args)
