"""The upload flow against an external Redis (the machine's own at 127.0.0.1:6379)."""

import socket
from pathlib import Path

import httpx
import pytest

from backend.main import create_app
from core.runtime.services import ServiceUrls
from core.settings import Settings
from evals.harness.worker import start_worker, stop_worker
from tests.conftest import UserFactory, create_project, upload, wait_for_job

EXTERNAL_REDIS = "redis://127.0.0.1:6379/0"


def redis_answers(host: str = "127.0.0.1", port: int = 6379) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.mark.skipif(not redis_answers(), reason="no Redis answers at 127.0.0.1:6379")
async def test_upload_flow_with_external_redis(
    settings: Settings, services: ServiceUrls, data_dir: Path, make_user: UserFactory
) -> None:
    urls = ServiceUrls(database_url=services.database_url, redis_url=EXTERNAL_REDIS)
    worker = start_worker(urls, data_dir)
    try:
        app = create_app(settings, urls)
        async with app.router.lifespan_context(app):
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://studyai.test") as client:
                owner = await make_user("external")
                project_id = await create_project(client, owner)
                text = b"# Queue\n\n## External\n\nThis document travels through the machine's own Redis.\n"
                response = await upload(client, owner, project_id, "queue.md", text)
                assert response.status_code == 202
                job = await wait_for_job(client, owner, project_id, response.json()["job_id"], timeout=120)
                assert job["status"] == "succeeded", job
                assert job["chunks_total"] == 1
                assert worker.poll() is None
    finally:
        stop_worker(worker)
