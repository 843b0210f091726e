"""Joining a project with an invitation code, and the limit on guessing codes.

A code that cannot be one, or that is unknown, revoked, expired or used up, spends the address's
join-failure budget (RATE_LIMIT_JOIN_FAILURES); once it is spent every code from that address, right or
wrong, answers 429 until the window frees a slot. Right codes spend nothing, so a class behind one
address, a few of them mistyping, all get in. The budget is checked before any lookup."""

from dataclasses import dataclass
from typing import NoReturn
from uuid import UUID

from fastapi import HTTPException, Request, status
from psycopg import AsyncConnection

from backend.middleware.rate_limits import RateLimited, RateLimiter, note
from backend.services import security_log
from core.accounts import codes
from core.store import invitations

NO_SUCH_INVITATION = "No such invitation, or it has expired."
USED_UP = "This invitation has been used as many times as it allows: ask for a new one."


@dataclass(frozen=True, slots=True)
class Membership:
    """Where a join left the caller: the project and their role in it now."""

    project_id: UUID
    project_name: str
    role: str


async def refuse_if_blocked(request: Request, limiter: RateLimiter | None) -> None:
    """429 when the address has spent its wrong-code budget (checked before the code is looked up)."""
    if limiter is not None and (blocked := await limiter.join_blocked(request.scope)):
        note(request.scope, blocked)
        raise RateLimited(blocked, "Too many wrong invitation codes from this address; retry later.")


async def refuse(request: Request, limiter: RateLimiter | None, *, used_up: bool = False) -> NoReturn:
    """A wrong code: spends the address's budget, then 404 (or 410 for an invitation used up)."""
    if limiter is not None:
        await limiter.join_failed(request.scope)
    if used_up:
        raise HTTPException(status.HTTP_410_GONE, USED_UP)
    raise HTTPException(status.HTTP_404_NOT_FOUND, NO_SUCH_INVITATION)


async def stored_code(request: Request, limiter: RateLimiter | None, typed: str) -> str:
    """The code's stored form, after the budget check; a string that cannot be a code is a wrong one."""
    await refuse_if_blocked(request, limiter)
    code = codes.normalize(typed)
    if code is None:
        await refuse(request, limiter)
    return code


async def join(
    conn: AsyncConnection, request: Request, limiter: RateLimiter | None, *, code: str, user_id: UUID
) -> Membership:
    """user_id joins with the (stored-form) code and the join is logged as the project's `member.joined`
    event, on the caller's connection (inside its transaction, when it has one). Raises 404/410 for a
    wrong code, having spent the budget."""
    redeemed = await invitations.redeem(conn, code=code, user_id=user_id)
    if redeemed.project_id is None or redeemed.project_name is None or redeemed.role is None:
        await refuse(request, limiter, used_up=redeemed.outcome == "used_up")
    if redeemed.outcome in ("joined", "promoted"):
        details: dict[str, object] = {"role": redeemed.role, "invitation_id": str(redeemed.invitation_id)}
        if redeemed.previous_role is not None:
            details["previous_role"] = redeemed.previous_role
        await security_log.record(
            conn,
            request,
            action="member.joined",
            actor_user_id=user_id,
            project_id=redeemed.project_id,
            target_user_id=user_id,
            target_id=redeemed.invitation_id,
            details=details,
        )
    return Membership(redeemed.project_id, redeemed.project_name, redeemed.role)
