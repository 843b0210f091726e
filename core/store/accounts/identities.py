"""Accounts' identities at outside issuers (migration 0018): OpenID Connect providers and LTI platforms.
An identity is found by (kind, issuer, subject); linking by email happens only when the issuer vouches
for the email (the caller decides that and says so)."""

from dataclasses import dataclass
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection
from core.store.sql.rows import columns, fetch_one, fetch_required


@dataclass(frozen=True, slots=True)
class Identity:
    id: UUID
    user_id: UUID
    kind: str
    issuer: str
    subject: str
    email: str | None


_COLUMNS = columns(Identity)


async def find(conn: Connection, *, kind: str, issuer: str, subject: str) -> Identity | None:
    """The identity, bumping its last use."""
    return await fetch_one(
        conn,
        class_row(Identity),
        "UPDATE identities SET last_used_at = now()"
        " WHERE kind = %(kind)s AND issuer = %(issuer)s AND subject = %(subject)s"
        f" RETURNING {_COLUMNS}",
        {"kind": kind, "issuer": issuer, "subject": subject},
    )


async def link(
    conn: Connection, *, user_id: UUID, kind: str, issuer: str, subject: str, email: str | None
) -> Identity:
    """Links the account to this identity (idempotent: an existing link to the same identity is kept)."""
    return await fetch_required(
        conn,
        class_row(Identity),
        "INSERT INTO identities (user_id, kind, issuer, subject, email)"
        " VALUES (%(user_id)s, %(kind)s, %(issuer)s, %(subject)s, %(email)s)"
        " ON CONFLICT (kind, issuer, subject) DO UPDATE SET last_used_at = now()"
        f" RETURNING {_COLUMNS}",
        {"user_id": user_id, "kind": kind, "issuer": issuer, "subject": subject, "email": email},
    )
