"""No per-machine state (issue 41): replicas with their own data folders on one Postgres publish one LTI
key set, label with one confidence calibration (a refit reaches a running process without a restart),
and worker processes are seen one by one, a killed one as dead within three beats."""

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from joserfc.jwk import RSAKey

from backend.accounts.lti.keys import load_tool_key
from core.confidence import Calibration, KindModel
from core.confidence.source import CalibrationSource
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.accounts import accounts
from core.store.runs.calibrations import store_calibration
from core.store.runs.workers import running_on
from core.store.sql.pool import open_pool
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import Caller, UserFactory, local_settings, own_app

Conn = psycopg.AsyncConnection[dict[str, Any]]


@pytest.fixture
async def admin_user(db: Conn, make_user: UserFactory) -> Caller:
    admin = await make_user("operator")
    await accounts.set_admin(db, user_id=admin.id)
    return admin


async def test_every_replica_publishes_the_same_lti_key_set(
    settings: Settings, services: ServiceUrls, tmp_path: Path
) -> None:
    key_sets = []
    for replica in ("a", "b"):
        own = local_settings(tmp_path / replica)  # a data folder of its own, as on another machine
        async with own_app(own, services) as (_, http):
            response = await http.get("/lti/jwks")
            assert response.status_code == 200, response.text
            key_sets.append(response.json())
    assert key_sets[0] == key_sets[1] and len(key_sets[0]["keys"]) == 1
    assert not (tmp_path / "a" / "lti").exists()  # nothing of it on either machine


async def test_the_tool_key_comes_from_a_mounted_secret_or_an_older_file(
    services: ServiceUrls, db: Conn, tmp_path: Path
) -> None:
    pem = RSAKey.generate_key(2048).as_pem(private=True)
    mounted = tmp_path / "tool-key.pem"
    mounted.write_bytes(pem)
    pool = await open_pool(services.database_url, max_size=2)
    try:
        secret = await load_tool_key(pool, key_file=mounted, data_dir=tmp_path)
        assert secret.thumbprint() == RSAKey.import_key(pem).thumbprint()
        # A deployment upgraded from a version that kept the key in its data folder keeps that key (the
        # LMSs registered it): the first process to need it moves it into the database.
        stored = await db.execute("DELETE FROM deployment_keys RETURNING pem")
        before = await stored.fetchall()
        try:
            (tmp_path / "lti").mkdir()
            (tmp_path / "lti" / "tool_key.pem").write_bytes(pem)
            moved = await load_tool_key(pool, key_file=None, data_dir=tmp_path)
            again = await load_tool_key(pool, key_file=None, data_dir=tmp_path / "elsewhere")
            assert moved.thumbprint() == again.thumbprint() == secret.thumbprint()
        finally:
            await db.execute("DELETE FROM deployment_keys")
            for row in before:
                await db.execute(
                    "INSERT INTO deployment_keys (name, pem) VALUES ('lti_tool', %s)", (row["pem"],)
                )
    finally:
        await pool.close()


def fitted(chat_model: str, embedding_model: str, high_min: float) -> Calibration:
    answer = KindModel(("support",), (0.5,), (0.25,), (4.0,), 0.0, high_min, 0.0)
    return Calibration(chat_model, embedding_model, {"answer": answer}, source="test", fitted_on="a test")


async def test_a_calibration_stored_anywhere_reaches_a_running_process(
    services: ServiceUrls, db: Conn
) -> None:
    chat_model, embedding_model = f"test-host/model-{time.time_ns()}", "test-embedding"
    pool = await open_pool(services.database_url, max_size=2)
    try:
        source = CalibrationSource(
            pool, chat_model, embedding_model, data_dir=None, all_signals=False, refresh_s=0.2
        )
        assert not (await source.current()).calibrated  # nothing fitted yet: every label "medium"
        # `studyai calibrate` on another machine stores a fit (backend/cli/calibrate.store_confidence).
        value = fitted(chat_model, embedding_model, 0.9).as_dict()
        await store_calibration(db, chat_model, embedding_model, value)
        assert not (await source.current()).calibrated  # read again only after refresh_s
        await asyncio.sleep(0.25)
        current = await source.current()
        assert current.calibrated and current.source == "database"
        assert current.assess("answer", {"support": 1.0}).label == "high"
        # A refit replaces it, and is picked up the same way.
        await store_calibration(
            db, chat_model, embedding_model, fitted(chat_model, embedding_model, 1.0).as_dict()
        )
        await asyncio.sleep(0.25)
        assert (await source.current()).assess("answer", {"support": 1.0}).label == "medium"
    finally:
        await db.execute("DELETE FROM confidence_calibrations WHERE chat_model = %s", (chat_model,))
        await pool.close()


async def workers_seen(http: Any, admin: Caller) -> list[dict[str, Any]]:
    response = await http.get("/admin/workers", headers=admin)
    assert response.status_code == 200, response.text
    return list(response.json())


async def test_each_worker_process_is_seen_and_a_killed_one_is_dead_within_three_beats(
    settings: Settings, services: ServiceUrls, admin_user: Caller, make_user: Any, tmp_path: Path
) -> None:
    env = {"WORKER_BEAT_S": "1"}
    first = start_worker(services, tmp_path, "--queue", "agents", **env)
    second = start_worker(services, tmp_path, "--queue", "agents", **env)
    beat_settings = settings.with_values({"WORKER_BEAT_S": 1})
    async with own_app(beat_settings, services) as (_, http):
        try:
            deadline = time.monotonic() + 60
            mine: dict[int, dict[str, Any]] = {}
            while len(mine) < 2 or any(w["status"] != "running" for w in mine.values()):
                assert time.monotonic() < deadline, mine
                await asyncio.sleep(0.5)
                seen = await workers_seen(http, admin_user)
                mine = {w["pid"]: w for w in seen if w["pid"] in (first.pid, second.pid)}
            assert all(w["queues"] == ["studyai:agents"] for w in mine.values())
            os.kill(first.pid, signal.SIGKILL)  # no clean stop: only its silence tells
            first.wait(10)
            killed_at = time.monotonic()
            while True:
                seen = {w["pid"]: w for w in await workers_seen(http, admin_user)}
                if seen[first.pid]["status"] == "dead":
                    break
                assert time.monotonic() - killed_at < 10, seen[first.pid]
                await asyncio.sleep(0.5)
            assert seen[second.pid]["status"] == "running"  # the live one still looks alive, alone
            # The container probe (Kubernetes): this host has a live worker; a pod that has none fails it.
            probe_env = {**os.environ, "DATABASE_URL": services.database_url, "WORKER_BEAT_S": "1"}
            probe = subprocess.run(
                [sys.executable, "-m", "workers.probe"], env=probe_env, capture_output=True, timeout=60
            )
            assert probe.returncode == 0, probe.stderr
            async with await psycopg.AsyncConnection.connect(services.database_url) as conn:
                assert not await running_on(conn, "no-such-pod", beat_s=1)
            ready = (await http.get("/health/ready")).json()
            statuses = {w["pid"]: w["status"] for w in ready["workers"]}
            assert statuses[first.pid] == "dead" and statuses[second.pid] == "running"
        finally:
            stop_worker(second)
            if first.poll() is None:
                stop_worker(first)
        # A clean stop says so.
        stopped = {w["pid"]: w for w in await workers_seen(http, admin_user)}
        assert stopped[second.pid]["status"] == "stopped"
        student = await make_user("not-an-admin")
        assert (await http.get("/admin/workers", headers=student)).status_code == 403


def test_stored_calibrations_are_plain_json() -> None:
    """What `studyai calibrate` stores reads back into the same calibration."""
    calibration = fitted("a/b", "c", 0.8)
    again = Calibration.from_dict(json.loads(json.dumps(calibration.as_dict())))
    assert again == calibration
