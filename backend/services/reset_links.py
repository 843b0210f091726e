"""Password reset links, issued by an administrator or a project owner: a one-time token
(core/store/accounts.issue_token, which spends the account's earlier ones), the `password.reset_issued`
event, and the link mailed to the account when SMTP is configured."""

from datetime import UTC, datetime, timedelta
from uuid import UUID

from fastapi import Request
from psycopg import AsyncConnection

from backend.schemas.admin import ResetLinkOut
from backend.services import mail, security_log
from backend.services.browser_sessions import public_base
from core.settings import Settings
from core.store import accounts


async def issue(
    conn: AsyncConnection,
    request: Request,
    settings: Settings,
    *,
    user_id: UUID,
    actor_id: UUID,
    project_id: UUID | None = None,
) -> ResetLinkOut:
    """A new reset link for user_id (not mailed yet: see `mail_link`), logged in the caller's transaction."""
    hours = settings.accounts.reset_link_hours
    token = await accounts.issue_token(conn, kind="reset", hours=hours, user_id=user_id, created_by=actor_id)
    await security_log.record(
        conn,
        request,
        action="password.reset_issued",
        actor_user_id=actor_id,
        project_id=project_id,
        target_user_id=user_id,
        details={"via": "owner" if project_id else "admin", "hours": hours},
    )
    link = f"{public_base(request, settings)}/app/#/reset?token={token}"
    return ResetLinkOut(link=link, expires_at=datetime.now(UTC) + timedelta(hours=hours), mailed=False)


async def mail_link(settings: Settings, email: str, out: ResetLinkOut) -> ResetLinkOut:
    """The link sent to the account's email when SMTP_HOST is set; `mailed` says whether it went out."""
    body = (
        "A link to set a new password for your studyAI account was made for you by an administrator or"
        f" by your teacher:\n\n{out.link}\n\nIt works once, until {out.expires_at:%Y-%m-%d %H:%M} UTC."
        " Using it signs you out everywhere else.\nIf you did not ask for it, ignore this message.\n"
    )
    message = mail.message(settings.smtp, to=email, subject="Set a new studyAI password", body=body)
    return out.model_copy(update={"mailed": await mail.send_quietly(settings.smtp, message)})
