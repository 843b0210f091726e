"""The operator's administration commands: `users create --admin`, `users setup-token`, `users disable`
and `enable`, `users reset-link`, each on the database directly and logged."""

import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest

from backend.cli.user_admin import announce_setup, base_url
from core.accounts.secrets import token_hash
from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import Conn, studyai


def cli(services: ServiceUrls, data_dir: Path, *args: str) -> Any:
    return studyai("users", *args, data_dir=data_dir, database_url=services.database_url)


async def actions(db: Conn, email: str) -> list[str]:
    rows = await (
        await db.execute(
            "SELECT e.action FROM security_events e JOIN users u ON u.id = e.target_user_id"
            " WHERE u.email = %s AND e.actor_user_id IS NULL ORDER BY e.id",
            (email,),
        )
    ).fetchall()
    return [row["action"] for row in rows]


@pytest.mark.usefixtures("no_admin")
async def test_the_operator_administers_accounts_from_the_shell(
    client: httpx.AsyncClient, services: ServiceUrls, data_dir: Path, db: Conn
) -> None:
    link = cli(services, data_dir, "setup-token")
    assert link.returncode == 0, link.stderr
    assert link.stdout.strip().startswith("http://") and "/app/#/setup?token=" in link.stdout

    email = f"head-{time.time_ns()}@school.example"
    created = cli(services, data_dir, "create", email, "--admin")
    assert created.returncode == 0, created.stderr
    admin = {"Authorization": f"Bearer {created.stdout.strip().splitlines()[-1]}"}
    assert (await client.get("/admin/users", headers=admin)).status_code == 200
    assert "user.admin_granted" in await actions(db, email)
    refused = cli(services, data_dir, "setup-token")
    assert refused.returncode == 1 and "already has an administrator" in refused.stderr

    student = f"student-{time.time_ns()}@school.example"
    made = cli(services, data_dir, "create", student)
    key = {"Authorization": f"Bearer {made.stdout.strip().splitlines()[-1]}"}
    assert (await client.get("/admin/users", headers=key)).status_code == 403
    disabled = cli(services, data_dir, "disable", student)
    assert disabled.returncode == 0, disabled.stderr
    assert (await client.get("/projects", headers=key)).status_code == 401
    assert cli(services, data_dir, "enable", student).returncode == 0
    assert (await client.get("/projects", headers=key)).status_code == 401  # disabling ended the key
    reset = cli(services, data_dir, "reset-link", student)
    assert reset.returncode == 0 and "/app/#/reset?token=" in reset.stdout
    token = reset.stdout.strip().rsplit("token=", 1)[1]
    assert (await client.post("/auth/reset/check", json={"token": token})).json() == {"valid": True}
    assert await actions(db, student) == [
        "user.created",
        "key.created",
        "user.disabled",
        "credentials.revoked",
        "user.enabled",
        "password.reset_issued",
    ]
    missing = cli(services, data_dir, "disable", "nobody@school.example")
    assert missing.returncode == 1 and "no user" in missing.stderr


def test_up_announces_a_set_up_link_while_the_server_has_no_administrator(
    services: ServiceUrls, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(services.database_url, autocommit=True) as conn:
        demoted = [
            row[0] for row in conn.execute("UPDATE users SET is_admin = false WHERE is_admin RETURNING id")
        ]
        try:
            announce_setup(services.database_url, settings, base_url(settings, "0.0.0.0", 8123))
            line = capsys.readouterr().out.strip()
            path = settings.services.data_dir / "setup-link.txt"
            # Not a terminal (a service manager, a log shipper): the line names the file, never the token.
            assert line.startswith(f"studyai up: no administrator yet. Open the link in {path}")
            assert "token" not in line
            assert path.stat().st_mode & 0o777 == 0o600
            link = path.read_text().strip()
            assert link.startswith("http://localhost:8123/app/#/setup?token=")
            token = link.split("token=", 1)[1]
            live = conn.execute(
                "SELECT expires_at - now() > interval '23 hours' FROM one_time_tokens"
                " WHERE kind = 'setup' AND token_hash = %s AND used_at IS NULL",
                (token_hash(token),),
            ).fetchone()
            assert live == (True,)
            conn.execute("UPDATE users SET is_admin = true WHERE email = (SELECT min(email) FROM users)")
            announce_setup(services.database_url, settings, base_url(settings))
            assert capsys.readouterr().out == ""
        finally:
            conn.execute("UPDATE users SET is_admin = false WHERE email = (SELECT min(email) FROM users)")
            conn.execute("UPDATE users SET is_admin = true WHERE id = ANY(%s)", (demoted,))
