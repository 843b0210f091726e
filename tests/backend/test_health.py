"""GET /health/ready: every component's state, 200 while the required ones are ok and 503 otherwise,
no authentication and nothing secret in the answer."""

import asyncio
import socket
import subprocess
import sys
import time
from dataclasses import replace
from typing import Any

import httpx
from redis.asyncio import Redis

from core.runtime.services import ServiceUrls
from core.runtime.supervisor import ChildSpec, RestartPolicy, Supervisor
from core.settings import Settings
from tests.conftest import change_runtime, own_app

COMPONENTS = {"database", "queue", "embedding_model", "worker_index", "worker_agents", "chat_model"}


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens once the socket is closed


async def ready_until(http: httpx.AsyncClient, condition: Any, timeout: float = 120) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while True:
        response = await http.get("/health/ready")
        if condition(response.json()) or time.monotonic() > deadline:
            return response
        await asyncio.sleep(0.5)


async def test_ready_reports_each_component_and_the_workers_heartbeat(
    client: httpx.AsyncClient, worker: subprocess.Popen[bytes]
) -> None:
    assert (await client.get("/health")).json() == {"status": "ok"}
    response = await ready_until(
        client, lambda body: body["components"]["worker_index"]["status"] == "ok", timeout=120
    )
    body = response.json()
    assert response.status_code == 200, body
    assert response.headers["cache-control"] == "no-store"
    assert set(body["components"]) == COMPONENTS
    for name, component in body["components"].items():
        assert set(component) == {"status", "detail", "required"}, name
        assert component["required"] is (name in ("database", "queue", "embedding_model"))
    assert body["components"]["database"]["status"] == "ok"
    assert body["components"]["queue"]["status"] == "ok"
    assert body["components"]["embedding_model"]["status"] == "ok"
    assert "j_complete=" in body["components"]["worker_index"]["detail"]  # arq's own report
    assert body["components"]["chat_model"]["status"] == "not_configured"  # the shared app has no model
    assert body["status"] in ("ok", "degraded")


async def test_ready_answers_503_when_a_required_component_is_down(
    settings: Settings, services: ServiceUrls
) -> None:
    port = closed_port()
    urls = replace(services, llm_base_url=f"http://operator:hunter2@127.0.0.1:{port}/v1")
    async with own_app(settings, urls, timeout=30) as (app, http):
        started = time.monotonic()
        response = await http.get("/health/ready")
        assert time.monotonic() - started < 10
        body = response.json()
        # The chat model is reported down but does not take the instance out of a load balancer.
        assert response.status_code == 200, body
        assert body["status"] == "degraded"
        assert body["components"]["chat_model"]["status"] == "down"
        assert f"127.0.0.1:{port}" in body["components"]["chat_model"]["detail"]

        queue = app.state.runtime.redis
        change_runtime(app, redis=Redis(host="127.0.0.1", port=port, socket_connect_timeout=1))
        try:
            response = await http.get("/health/ready")
        finally:
            await app.state.runtime.redis.aclose()
            change_runtime(app, redis=queue)
        body = response.json()
        assert response.status_code == 503, body
        assert body["status"] == "down"
        assert body["components"]["queue"]["status"] == "down"
        assert body["components"]["database"]["status"] == "ok"
        assert "hunter2" not in response.text and services.database_url not in response.text


async def test_ready_shows_a_supervised_crash_loop(settings: Settings, services: ServiceUrls) -> None:
    policy = RestartPolicy(backoff_initial_s=0.05, backoff_max_s=0.2, crash_loop_deaths=3)
    crasher = [sys.executable, "-c", "import sys; sys.exit(7)"]
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    async with own_app(settings, services, timeout=30) as (app, http):
        with Supervisor(policy) as supervisor:
            supervisor.start(ChildSpec("worker-index", sleeper, {}))
            supervisor.start(ChildSpec("worker-agents", crasher, {}))
            app.state.api_resources = replace(app.state.api_resources, supervisor=supervisor)
            response = await ready_until(
                http, lambda body: body["components"]["process:worker-agents"]["status"] == "down", timeout=30
            )
        body = response.json()
        looping = body["components"]["process:worker-agents"]
        assert looping["status"] == "down" and looping["required"] is False
        assert "crash loop" in looping["detail"] and "last exit: exit code 7" in looping["detail"]
        running = body["components"]["process:worker-index"]
        assert running["status"] == "ok" and running["detail"].startswith("running, pid ")
