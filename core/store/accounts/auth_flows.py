"""Sign-ins in flight (migration 0018): an OIDC authorization-code flow or an LTI login, keyed by its
`state`. Stored server-side rather than in a cookie because an LMS posts its launch cross-site, where a
SameSite=Lax cookie is not sent; `browser_hash` binds a flow to the browser that started it where a
cookie can be read back (OIDC: a top-level redirect)."""

from dataclasses import asdict, dataclass, fields
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_one

FLOW_MINUTES = 10


@dataclass(frozen=True, slots=True)
class AuthFlow:
    state: str
    kind: str
    nonce: str
    code_verifier: str | None = None
    browser_hash: str | None = None
    platform_id: UUID | None = None
    next_path: str | None = None
    # An OIDC sign-in from the account screen: link the login to this account.
    link_user_id: UUID | None = None


_FIELDS = [field.name for field in fields(AuthFlow)]
_INSERT = (
    f"INSERT INTO auth_flows ({', '.join(_FIELDS)}, expires_at) VALUES"
    f" ({', '.join(f'%({name})s' for name in _FIELDS)}, now() + make_interval(mins => %(minutes)s))"
)


async def start(conn: Connection, flow: AuthFlow) -> None:
    await conn.execute("DELETE FROM auth_flows WHERE expires_at < now()")
    await conn.execute(_INSERT, {**asdict(flow), "minutes": FLOW_MINUTES})


async def spend(conn: Connection, *, state: str, kind: str) -> AuthFlow | None:
    """The flow with this state, deleted in the same statement (single use); None when unknown or expired."""
    return await fetch_one(
        conn,
        class_row(AuthFlow),
        "DELETE FROM auth_flows WHERE state = %(state)s AND kind = %(kind)s AND expires_at > now()"
        f" RETURNING {columns(AuthFlow)}",
        {"state": state, "kind": kind},
    )
