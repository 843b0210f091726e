"""Accounts (the users table; their keys: core/store/accounts/api_keys.py): passwords (Argon2id hashes from
core/accounts/passwords.py), administrators, teachers, disabled accounts, and one-time tokens (reset
links, the first-run set-up token). E-mails arrive normalised (core/accounts/emails.py)."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row, scalar_row

from core.accounts.secrets import new_token, token_hash
from core.store.sql.access import Connection
from core.store.sql.listing import Page
from core.store.sql.rows import columns, fetch_all, fetch_one, fetch_required


@dataclass(frozen=True, slots=True)
class Account:
    """The one record of a users row: never its password hash, only whether it has one."""

    id: UUID
    email: str
    display_name: str | None
    is_admin: bool
    is_teacher: bool
    disabled_at: datetime | None
    created_at: datetime
    has_password: bool
    email_verified: bool  # the address is proven: invitations addressed to it reach this account


_ACCOUNT_COLUMNS = columns(
    Account,
    computed={"has_password": "password_hash IS NOT NULL", "email_verified": "email_verified_at IS NOT NULL"},
)


@dataclass(frozen=True, slots=True)
class Credentials:
    """What a password sign-in checks: never leaves the store and the sign-in route."""

    id: UUID
    email: str
    password_hash: str | None
    disabled_at: datetime | None


async def create_account(
    conn: Connection,
    *,
    email: str,
    password_hash: str | None = None,
    display_name: str | None = None,
    is_admin: bool = False,
    is_teacher: bool = False,
    email_verified: bool = False,
) -> Account | None:
    """A new account; None when the email is taken."""
    return await fetch_one(
        conn,
        class_row(Account),
        "INSERT INTO users (email, password_hash, display_name, is_admin, is_teacher, password_changed_at,"
        "  email_verified_at)"
        " VALUES (%(email)s, %(hash)s, %(name)s, %(admin)s, %(teacher)s,"
        "  CASE WHEN %(hash)s::text IS NULL THEN NULL ELSE now() END,"
        "  CASE WHEN %(verified)s THEN now() END)"
        f" ON CONFLICT (email) DO NOTHING RETURNING {_ACCOUNT_COLUMNS}",
        {
            "email": email,
            "hash": password_hash,
            "name": display_name,
            "admin": is_admin,
            "teacher": is_teacher,
            "verified": email_verified,
        },
    )


async def ensure_account(conn: Connection, *, email: str) -> Account:
    """The account with this email, created (no password, the address vouched for) when there is none:
    the operator's and the tests' way to name a person."""
    return await fetch_required(
        conn,
        class_row(Account),
        "INSERT INTO users (email, email_verified_at) VALUES (%(email)s, now())"
        f" ON CONFLICT (email) DO UPDATE SET email = EXCLUDED.email RETURNING {_ACCOUNT_COLUMNS}",
        {"email": email},
    )


async def mark_email_verified(conn: Connection, *, user_id: UUID) -> None:
    await conn.execute(
        "UPDATE users SET email_verified_at = coalesce(email_verified_at, now()) WHERE id = %s", (user_id,)
    )


async def account(conn: Connection, *, user_id: UUID) -> Account | None:
    return await fetch_one(
        conn, class_row(Account), f"SELECT {_ACCOUNT_COLUMNS} FROM users WHERE id = %(id)s", {"id": user_id}
    )


async def account_by_email(conn: Connection, *, email: str) -> Account | None:
    return await fetch_one(
        conn,
        class_row(Account),
        f"SELECT {_ACCOUNT_COLUMNS} FROM users WHERE email = %(email)s",
        {"email": email},
    )


async def credentials(conn: Connection, *, email: str) -> Credentials | None:
    return await fetch_one(
        conn,
        class_row(Credentials),
        f"SELECT {columns(Credentials)} FROM users WHERE email = %(email)s",
        {"email": email},
    )


async def password_hash_of(conn: Connection, *, user_id: UUID) -> str | None:
    return await fetch_one(
        conn, scalar_row, "SELECT password_hash FROM users WHERE id = %(id)s", {"id": user_id}
    )


async def set_password(conn: Connection, *, user_id: UUID, password_hash: str | None) -> None:
    """Sets (or, with None, removes) the account's password."""
    await conn.execute(
        "UPDATE users SET password_hash = %s, password_changed_at = now() WHERE id = %s",
        (password_hash, user_id),
    )


async def set_display_name(conn: Connection, *, user_id: UUID, display_name: str | None) -> Account | None:
    """The account's own name (None clears it); the account, None when it is gone."""
    return await fetch_one(
        conn,
        class_row(Account),
        f"UPDATE users SET display_name = %(name)s WHERE id = %(id)s RETURNING {_ACCOUNT_COLUMNS}",
        {"id": user_id, "name": display_name},
    )


async def set_disabled(conn: Connection, *, user_id: UUID, disabled: bool) -> Account | None:
    """Disables (or enables) an account; its sessions and keys fail on their next request while disabled."""
    return await fetch_one(
        conn,
        class_row(Account),
        "UPDATE users SET disabled_at = CASE WHEN %(disabled)s THEN coalesce(disabled_at, now()) END"
        f" WHERE id = %(id)s RETURNING {_ACCOUNT_COLUMNS}",
        {"id": user_id, "disabled": disabled},
    )


async def set_admin(conn: Connection, *, user_id: UUID) -> None:
    await conn.execute("UPDATE users SET is_admin = true WHERE id = %s", (user_id,))


async def set_teacher(conn: Connection, *, user_id: UUID, teacher: bool) -> Account | None:
    return await fetch_one(
        conn,
        class_row(Account),
        f"UPDATE users SET is_teacher = %(teacher)s WHERE id = %(id)s RETURNING {_ACCOUNT_COLUMNS}",
        {"id": user_id, "teacher": teacher},
    )


async def has_school_login(conn: Connection, *, user_id: UUID) -> bool:
    """Whether an OpenID Connect identity (the school's login) is linked to the account."""
    return await fetch_required(
        conn,
        scalar_row,
        "SELECT EXISTS (SELECT 1 FROM identities WHERE user_id = %(id)s AND kind = 'oidc')",
        {"id": user_id},
    )


async def count_admins(conn: Connection) -> int:
    return await fetch_required(
        conn, scalar_row, "SELECT count(*) FROM users WHERE is_admin AND disabled_at IS NULL", {}
    )


async def list_accounts(conn: Connection, *, query: str | None, page: Page) -> list[Account]:
    """Every account, by email, optionally those whose email contains `query` (administrators only)."""
    return await fetch_all(
        conn,
        class_row(Account),
        f"SELECT {_ACCOUNT_COLUMNS} FROM users"
        " WHERE %(query)s::text IS NULL OR strpos(email, lower(%(query)s)) > 0"
        " ORDER BY email LIMIT %(limit)s OFFSET %(offset)s",
        {"query": query, **page},
    )


async def issue_token(
    conn: Connection, *, kind: str, hours: int, user_id: UUID | None = None, created_by: UUID | None = None
) -> str:
    """A one-time token (a reset link's for user_id, or the set-up token); only its hash is stored. A new
    reset link spends the account's earlier unused ones."""
    if kind == "reset":
        await conn.execute(
            "UPDATE one_time_tokens SET used_at = now()"
            " WHERE kind = 'reset' AND user_id = %s AND used_at IS NULL",
            (user_id,),
        )
    token = new_token()
    await conn.execute(
        "INSERT INTO one_time_tokens (kind, token_hash, user_id, created_by, expires_at)"
        " VALUES (%s, %s, %s, %s, now() + make_interval(hours => %s))",
        (kind, token_hash(token), user_id, created_by, hours),
    )
    return token


@dataclass(frozen=True, slots=True)
class SpentToken:
    id: UUID
    user_id: UUID | None


async def spend_token(conn: Connection, *, kind: str, token: str) -> SpentToken | None:
    """Marks a live token of this kind used and returns it; None when unknown, used or expired. One
    statement: two requests with the same token cannot both spend it."""
    return await fetch_one(
        conn,
        class_row(SpentToken),
        "UPDATE one_time_tokens SET used_at = now()"
        " WHERE kind = %(kind)s AND token_hash = %(hash)s AND used_at IS NULL AND expires_at > now()"
        " RETURNING id, user_id",
        {"kind": kind, "hash": token_hash(token)},
    )


async def token_is_live(conn: Connection, *, kind: str, token: str) -> bool:
    found = await fetch_one(
        conn,
        scalar_row,
        "SELECT 1 FROM one_time_tokens WHERE kind = %(kind)s AND token_hash = %(hash)s"
        " AND used_at IS NULL AND expires_at > now()",
        {"kind": kind, "hash": token_hash(token)},
    )
    return found is not None
