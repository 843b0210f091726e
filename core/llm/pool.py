"""A pool of model servers (LLM_BASE_URLS): each server has its own admission queue (core/llm/admission.py)
and slot count, and a run goes to one of them for all its calls.

The slot count every caller admits is the pool's shared definition, published in each server's queue
(the scripts read it before the caller's own): the server's own count where it says (llama.cpp's
`GET /props`: `total_slots`), else the `=SLOTS` of LLM_BASE_URLS. A run is routed by its project
(rendezvous hashing): the project's passages and instructions are then a prompt prefix that server has
cached, and a run's follow-up calls (self-checks, option scores) reuse it; when that server has no free
slot while another has, the run goes to the other. A server that fails to connect is left out of the
routing for LLM_ENDPOINT_DOWN_S (a key in Redis, so every process leaves it out) and its callers are
retried on another (agents/runs/service.py).

Without LLM_BASE_URLS the pool is one server (LLM_BASE_URL or the embedded one) on the queue it always
had, and nothing is routed."""

import hashlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx
from langchain_openai import ChatOpenAI
from redis.asyncio import Redis

from core.llm.admission import LlmAdmission
from core.settings import Settings

log = logging.getLogger(__name__)

NAMESPACE = "studyai:llm"
PROBE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Endpoint:
    url: str
    slots: int

    @property
    def key(self) -> str:
        return hashlib.sha256(self.url.encode()).hexdigest()[:12]


def parse_endpoints(spec: str, default_slots: int) -> list[Endpoint]:
    """LLM_BASE_URLS: "URL[=SLOTS],..." (a URL may not hold "=" or ","; a model server's never does)."""
    endpoints = []
    for item in (part.strip() for part in spec.split(",")):
        if not item:
            continue
        url, _, slots = item.partition("=")
        count = int(slots) if slots.strip() else default_slots
        if count < 1:
            raise ValueError(f"LLM_BASE_URLS: {url} needs at least one slot")
        endpoints.append(Endpoint(url.strip().rstrip("/"), count))
    if len({e.url for e in endpoints}) != len(endpoints):
        raise ValueError("LLM_BASE_URLS names a server twice")
    return endpoints


@dataclass(frozen=True)
class Route:
    """One server of the pool: its queue and its chat model."""

    endpoint: Endpoint
    admission: LlmAdmission
    llm: ChatOpenAI


class ModelPool:
    def __init__(self, redis: Redis, routes: Sequence[Route], *, down_s: float) -> None:
        if not routes:
            raise ValueError("a model pool needs a server")
        self.routes = list(routes)
        self._redis = redis
        self._down_s = down_s

    @classmethod
    def from_settings(
        cls,
        redis: Redis,
        settings: Settings,
        *,
        default_slots: int,
        make_model: Callable[[str], ChatOpenAI],
    ) -> "ModelPool | None":
        """The pool LLM_BASE_URLS names, each server with a queue of its own; None without it."""
        if not settings.llm.base_urls:
            return None
        routes = [
            Route(
                endpoint,
                LlmAdmission(
                    redis,
                    concurrency=endpoint.slots,
                    queue_max=settings.llm.queue_max,
                    lease_s=settings.llm.lease_s,
                    namespace=f"{NAMESPACE}:{endpoint.key}",
                ),
                make_model(endpoint.url),
            )
            for endpoint in parse_endpoints(settings.llm.base_urls, default_slots)
        ]
        return cls(redis, routes, down_s=settings.llm.endpoint_down_s)

    async def publish(self) -> None:
        """Publishes each server's slot count as the one all callers admit: the server's own where it
        reports it, else the configured one."""
        for route in self.routes:
            reported = await reported_slots(route.endpoint.url)
            slots = reported or route.endpoint.slots
            if reported and reported != route.endpoint.slots:
                log.warning(
                    "model server %s runs %d slots, not the %d LLM_BASE_URLS gives: admitting %d",
                    route.endpoint.url, reported, route.endpoint.slots, reported,
                )  # fmt: skip
            await route.admission.publish_slots(slots)

    async def choose(self, affinity: str, *, avoid: Sequence[Route] = ()) -> Route:
        """The server for a run of `affinity` (its project): the first in its rendezvous order that is
        up and has a free slot, else the least loaded one that is up (else any: all may be back)."""
        ordered = sorted(self.routes, key=lambda r: _rank(affinity, r.endpoint), reverse=True)
        candidates = [r for r in ordered if r not in avoid] or ordered
        down = await self._redis.mget([self._down_key(r) for r in candidates])
        up = [r for r, flag in zip(candidates, down, strict=True) if flag is None] or candidates
        loads = []
        for route in up:
            holders, waiting, slots = await route.admission.load()
            if holders + waiting < slots:
                return route
            loads.append(((holders + waiting) / slots, route))
        return min(loads, key=lambda load: load[0])[1]

    async def mark_down(self, route: Route) -> None:
        """Leaves the server out of every process's routing for LLM_ENDPOINT_DOWN_S."""
        url = route.endpoint.url
        log.warning("model server %s is unreachable: routing around it for %g s", url, self._down_s)
        await self._redis.set(self._down_key(route), "1", px=int(self._down_s * 1000))

    async def states(self) -> list[tuple[Endpoint, bool, tuple[int, int, int]]]:
        """(server, up, (holders, waiting, slots)) of each, for GET /health/ready."""
        down = await self._redis.mget([self._down_key(r) for r in self.routes])
        return [
            (route.endpoint, flag is None, await route.admission.load())
            for route, flag in zip(self.routes, down, strict=True)
        ]

    def _down_key(self, route: Route) -> str:
        return f"{NAMESPACE}:down:{route.endpoint.key}"


def _rank(affinity: str, endpoint: Endpoint) -> str:
    return hashlib.sha256(f"{affinity}:{endpoint.key}".encode()).hexdigest()


async def reported_slots(base_url: str) -> int | None:
    """A llama.cpp server's own slot count (GET /props next to /v1); None from any other server."""
    root = base_url.removesuffix("/v1")
    try:
        async with httpx.AsyncClient(timeout=PROBE_TIMEOUT_S) as http:
            response = await http.get(f"{root}/props")
        total = response.json().get("total_slots") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return total if isinstance(total, int) and total > 0 else None
