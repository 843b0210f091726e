"""GET /health/ready: each component's state, for a load balancer and for operators.

`GET /health` (backend/main.py) stays the cheap liveness probe. Readiness answers 200 while every
component this API instance needs to serve requests is ok (database, queue, embedding model) and 503
otherwise. Workers, the chat model and the processes `studyai up` supervises are reported too, but do
not fail readiness: taking API instances out of a load balancer does not bring a worker or a shared
model back, and search and documents still work without them (agent routes answer 503 themselves).
No authentication, and nothing secret in the answer: no URLs, no error messages that may carry one (the
worker processes are listed by host name and pid, which an operator needs to find a dead one)."""

import asyncio
from typing import Any, Literal

import httpx
from fastapi import APIRouter
from fastapi.responses import JSONResponse
from psycopg_pool import PoolTimeout

from backend.deps import ApiResourcesDep, RuntimeDep
from backend.operations.workers import WorkerOut
from core.jobs.specs import AGENT_QUEUE, INDEX_QUEUE
from core.runtime import Runtime
from core.runtime.supervisor import ChildState
from core.store.runs.workers import worker_processes

router = APIRouter(tags=["health"])

Status = Literal["ok", "degraded", "down", "not_configured"]
PROBE_TIMEOUT_S = 2.0
REQUIRED = ("database", "queue", "embedding_model")
WORKER_QUEUES = {"worker_index": INDEX_QUEUE, "worker_agents": AGENT_QUEUE}
_CHILD_STATUS: dict[str, Status] = {
    "running": "ok",
    "starting": "degraded",
    "restarting": "degraded",
    "crash_loop": "down",
    "stopped": "down",
}


def _component(status: Status, detail: str) -> dict[str, str]:
    return {"status": status, "detail": detail}


async def check_database(pool: Any) -> dict[str, str]:
    try:
        async with pool.connection(timeout=PROBE_TIMEOUT_S) as conn:
            await asyncio.wait_for(conn.execute("SELECT 1"), PROBE_TIMEOUT_S)
    except PoolTimeout:
        return _component(
            "down", f"no pooled connection within {PROBE_TIMEOUT_S:g} s (database down or pool busy)"
        )
    except Exception as error:  # any failure is the answer; its message may hold the URL
        return _component("down", f"SELECT 1 failed: {type(error).__name__}")
    return _component("ok", "SELECT 1 answered")


async def check_queue(queue: Any) -> dict[str, str]:
    try:
        await asyncio.wait_for(queue.ping(), PROBE_TIMEOUT_S)
    except Exception as error:
        return _component("down", f"Redis PING failed: {type(error).__name__}")
    return _component("ok", "Redis PING answered")


async def check_worker(queue: Any, queue_name: str) -> dict[str, str]:
    """arq's workers write `{queue}:health-check` every health_check_interval with a TTL a second
    longer, so the key exists while a worker on that queue is alive and looping."""
    key = f"{queue_name}:health-check"
    try:
        report = await asyncio.wait_for(queue.get(key), PROBE_TIMEOUT_S)
    except Exception as error:
        return _component("down", f"could not read {key}: {type(error).__name__}")
    if report is None:
        return _component("down", f"no worker on {queue_name} reported within its health-check interval")
    text = report.decode(errors="replace") if isinstance(report, bytes) else str(report)
    return _component("ok", f"last report: {text}")


async def check_chat_model(base_url: str | None, api_key: str | None) -> dict[str, str]:
    if not base_url:
        return _component("not_configured", "no LLM_BASE_URL and no embedded model server")
    url = httpx.URL(base_url)
    where = f"{url.host}:{url.port or ('443' if url.scheme == 'https' else '80')}"  # never the userinfo
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as http:
            response = await http.get(f"{base_url.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError as error:
        return _component(
            "down",
            f"{where} did not answer GET /models within {PROBE_TIMEOUT_S:g} s ({type(error).__name__})",
        )
    if response.status_code != 200:
        return _component("degraded", f"{where} answered GET /models with HTTP {response.status_code}")
    return _component("ok", f"{where} answered GET /models")


async def list_workers(pool: Any, beat_s: float) -> list[dict[str, Any]]:
    """Every worker process of the last day (core/store/runs/workers.py): a killed one shows as "dead"
    within three beats. Empty when the database cannot say."""
    try:
        async with pool.connection(timeout=PROBE_TIMEOUT_S) as conn:
            found = await asyncio.wait_for(worker_processes(conn, beat_s=beat_s), PROBE_TIMEOUT_S)
    except Exception:  # the database component reports why
        return []
    return [WorkerOut.model_validate(w, from_attributes=True).model_dump(mode="json") for w in found]


def check_embeddings(runtime: Runtime) -> dict[str, str]:
    if getattr(runtime.retriever, "embeddings", None) is None:
        return _component("down", "the embedding model is not loaded")
    settings = runtime.settings
    return _component("ok", f"{settings.embeddings.provider} {settings.embeddings.model} loaded")


def describe_child(state: ChildState) -> dict[str, str]:
    parts = [state.status.replace("_", " ")]
    if state.pid is not None:
        parts.append(f"pid {state.pid}")
    parts.append(f"{state.restarts} restart{'s' if state.restarts != 1 else ''}")
    if state.recent_deaths:
        parts.append(
            f"{state.recent_deaths} death{'s' if state.recent_deaths != 1 else ''} in the last minute"
        )
    if state.last_exit:
        parts.append(f"last exit: {state.last_exit}")
    return _component(_CHILD_STATUS[state.status], ", ".join(parts))


@router.get("/health/ready")
async def ready(runtime: RuntimeDep, resources: ApiResourcesDep) -> JSONResponse:
    database, queue, index_worker, agents_worker, chat, workers = await asyncio.gather(
        check_database(runtime.pool),
        check_queue(runtime.redis),
        check_worker(runtime.redis, WORKER_QUEUES["worker_index"]),
        check_worker(runtime.redis, WORKER_QUEUES["worker_agents"]),
        check_chat_model(runtime.chat.base_url, runtime.settings.llm.api_key),
        list_workers(runtime.pool, runtime.settings.workers.beat_s),
    )
    watch = resources.postgres_watch
    down_reason, restarts = watch.state() if watch is not None else (None, 0)
    if down_reason is not None:  # the embedded server stopped: say why, not only that SELECT 1 failed
        database = _component("down", f"the embedded Postgres is not running: {down_reason}")
    elif restarts:
        database["detail"] += f"; the embedded Postgres was started again {restarts} time(s)"
    components: dict[str, dict[str, Any]] = {
        "database": database,
        "queue": queue,
        "embedding_model": check_embeddings(runtime),
        "worker_index": index_worker,
        "worker_agents": agents_worker,
        "chat_model": chat,
    }
    if runtime.models is not None:  # a pool: each server on its own, as its callers are routed
        servers = await asyncio.gather(
            *(
                check_chat_model(route.endpoint.url, runtime.settings.llm.api_key)
                for route in runtime.models.routes
            )
        )
        for (endpoint, up, (holders, waiting, slots)), server in zip(
            await runtime.models.states(), servers, strict=True
        ):
            where = endpoint.url.split("://", 1)[-1].split("/", 1)[0]
            state = "" if up else "; left out of routing after a failed connection"
            server["detail"] += f"; {holders}/{slots} slots busy, {waiting} waiting{state}"
            components[f"chat_model:{where}"] = server
        statuses = {server["status"] for server in servers}
        components["chat_model"] = _component(
            "ok" if statuses == {"ok"} else "down" if "ok" not in statuses else "degraded",
            f"{sum(s['status'] == 'ok' for s in servers)} of {len(servers)} model servers answer",
        )
    supervisor = resources.supervisor  # `studyai up`'s (backend/cli/app.py)
    if supervisor is not None:
        for name, child in supervisor.states().items():
            components[f"process:{name}"] = describe_child(child)
    for name, component in components.items():
        component["required"] = name in REQUIRED
    if any(components[name]["status"] != "ok" for name in REQUIRED):
        overall, code = "down", 503
    elif any(c["status"] not in ("ok", "not_configured") for c in components.values()):
        overall, code = "degraded", 200
    else:
        overall, code = "ok", 200
    return JSONResponse(
        {"status": overall, "components": components, "workers": workers},
        status_code=code,
        headers={"Cache-Control": "no-store"},
    )
