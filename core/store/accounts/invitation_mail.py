"""The invitation an owner mails (POST /projects/{id}/invitations/{id}/email): read with its project's
name, only by an owner of that project and only while it can still be used."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from psycopg.rows import class_row

from core.store.sql.access import Connection, owner_of
from core.store.sql.rows import fetch_one


@dataclass(frozen=True, slots=True)
class MailedInvitation:
    id: UUID
    code: str  # stored form: no separator
    role: str
    expires_at: datetime
    project_name: str


async def live_invitation(
    conn: Connection, *, project_id: UUID, user_id: UUID, invitation_id: UUID
) -> MailedInvitation | None:
    """The invitation when it is the project's, the caller owns the project and it is live (not revoked,
    not expired, uses left); None otherwise."""
    return await fetch_one(
        conn,
        class_row(MailedInvitation),
        "SELECT i.id, i.code, i.role, i.expires_at, p.name AS project_name"
        " FROM invitations i JOIN projects p ON p.id = i.project_id"
        " WHERE i.id = %(invitation_id)s AND i.project_id = %(project_id)s"
        f" AND {owner_of('i.project_id')}"
        " AND i.revoked_at IS NULL AND i.expires_at > now() AND i.uses < i.max_uses",
        {"invitation_id": invitation_id, "project_id": project_id, "user_id": user_id},
    )
