"""The worker's hourly purge of sign-in state that can sign nobody in any more: browser sessions and
one-time tokens ended more than 30 days ago, expired sign-ins in flight and LTI nonces; live rows stay."""

import uuid
from typing import Any

from core.jobs.specs import PurgeHistory
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts
from tests.backend.test_accounts import Conn, account
from tests.workers.runtime import job_runtime
from workers.jobs.judge import purge_query_history


async def test_the_hourly_purge_deletes_ended_sign_in_state(
    settings: Settings, services: ServiceUrls, db: Conn
) -> None:
    email = await account(db, "purged")
    user_id = (await accounts.account_by_email(db, email=email)).id  # type: ignore[union-attr]

    async def row(sql: str, *params: Any) -> Any:
        """Inserts one row; its key (the token's hash, or the nonce)."""
        key = "token_hash" if "token_hash" in sql else "nonce"
        cur = await db.execute(f"{sql} RETURNING {key}", params)
        return (await cur.fetchone())[key]  # type: ignore[index]

    def session(ended: str) -> str:
        return (
            "INSERT INTO browser_sessions (user_id, token_hash, csrf_token, via, expires_at, revoked_at)"
            f" VALUES (%s, %s, 'csrf', 'password', {ended})"
        )

    gone_sessions = [
        await row(session("now() + interval '1 day', now() - interval '31 days'"), user_id, uuid.uuid4().hex),
        await row(session("now() - interval '31 days', NULL"), user_id, uuid.uuid4().hex),
    ]
    kept_sessions = [
        await row(session("now() + interval '1 day', now() - interval '29 days'"), user_id, uuid.uuid4().hex),
        await row(session("now() + interval '1 day', NULL"), user_id, uuid.uuid4().hex),
    ]
    token = "INSERT INTO one_time_tokens (kind, token_hash, user_id, expires_at) VALUES ('reset', %s, %s, {})"
    gone_token = await row(token.format("now() - interval '31 days'"), uuid.uuid4().hex, user_id)
    kept_tokens = [
        await row(token.format("now() - interval '29 days'"), uuid.uuid4().hex, user_id),
        await row(token.format("now() + interval '1 day'"), uuid.uuid4().hex, user_id),
    ]
    flow = "INSERT INTO auth_flows (state, kind, nonce, expires_at) VALUES (%s, 'oidc', %s, {})"
    gone_flow = await row(flow.format("now() - interval '1 minute'"), uuid.uuid4().hex, uuid.uuid4().hex)
    kept_flow = await row(flow.format("now() + interval '10 minutes'"), uuid.uuid4().hex, uuid.uuid4().hex)
    cur = await db.execute(
        "INSERT INTO lti_platforms (name, issuer, client_id, auth_login_url, jwks, deployment_ids)"
        " VALUES ('LMS', %s, 'tool', 'https://lms.example/auth', '{\"keys\": []}', ARRAY['1']) RETURNING id",
        (f"https://lms-{uuid.uuid4().hex}.example",),
    )
    platform = (await cur.fetchone())["id"]  # type: ignore[index]
    nonce = "INSERT INTO lti_nonces (platform_id, nonce, expires_at) VALUES (%s, %s, {})"
    gone_nonce = await row(nonce.format("now() - interval '1 minute'"), platform, uuid.uuid4().hex)
    kept_nonce = await row(nonce.format("now() + interval '1 hour'"), platform, uuid.uuid4().hex)

    async with job_runtime(settings, services) as runtime:
        outcome = await purge_query_history(runtime, PurgeHistory())
    purged = outcome["purged"]
    assert purged["browser_sessions"] >= 2 and purged["one_time_tokens"] >= 1
    assert purged["auth_flows"] >= 1 and purged["lti_nonces"] >= 1

    async def present(table: str, column: str, values: list[Any]) -> set[Any]:
        cur = await db.execute(f"SELECT {column} FROM {table} WHERE {column} = ANY(%s)", (values,))
        return {r[column] for r in await cur.fetchall()}

    assert await present("browser_sessions", "token_hash", gone_sessions + kept_sessions) == set(
        kept_sessions
    )
    assert await present("one_time_tokens", "token_hash", [gone_token, *kept_tokens]) == set(kept_tokens)
    assert await present("auth_flows", "nonce", [gone_flow, kept_flow]) == {kept_flow}
    assert await present("lti_nonces", "nonce", [gone_nonce, kept_nonce]) == {kept_nonce}
