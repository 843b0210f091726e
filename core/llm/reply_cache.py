"""Replies of the chat model kept for an identical prompt (issue 43): the answer call is greedy (temperature
0), so the same model given the same messages writes the same reply; a class asking the question the
teacher set gets the first student's reply at once, without a turn at the model.

The key is a hash of everything the reply depends on: the project (a cached reply never crosses a class),
the model's name, the call's parameters and every message (instructions, the excerpts with their chunk
ids and texts, the question). A re-indexed passage, a changed prompt or another model makes another key;
what is kept expires after LLM_REPLY_CACHE_S. Kept in Redis, so every API process shares it. A Redis that
fails is a miss: the model answers as if nothing were kept."""

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any
from uuid import UUID

from langchain_core.messages import BaseMessage
from redis.asyncio import Redis
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

_PREFIX = "studyai:reply:"


@dataclass(frozen=True)
class CachedReply:
    raw: str  # the model's reply as it wrote it (the answer's JSON)
    logprobs: dict[str, float]  # the confidence signals read from its tokens' log-probabilities


def reply_key(
    project_id: UUID, model: str, params: Mapping[str, Any], messages: Sequence[BaseMessage]
) -> str:
    said = [{"role": message.type, "content": message.content} for message in messages]
    payload = json.dumps(
        {"project": str(project_id), "model": model, "params": dict(params), "messages": said},
        sort_keys=True, ensure_ascii=False, default=str,
    )  # fmt: skip
    return hashlib.sha256(payload.encode()).hexdigest()


class ReplyCache:
    """Opened once with the runtime's Redis; `ttl_s` 0 keeps nothing (every call goes to the model)."""

    def __init__(self, redis: Redis, ttl_s: float) -> None:
        self._redis = redis
        self._ttl_ms = int(ttl_s * 1000)

    @property
    def enabled(self) -> bool:
        return self._ttl_ms > 0

    async def get(self, key: str) -> CachedReply | None:
        if not self.enabled:
            return None
        try:
            kept = await self._redis.get(_PREFIX + key)
        except RedisError as error:
            log.warning("reply cache unreadable, asking the model: %s", error)
            return None
        if kept is None:
            return None
        try:
            fields = json.loads(kept)
            return CachedReply(
                raw=str(fields["raw"]), logprobs={str(k): float(v) for k, v in fields["logprobs"].items()}
            )
        except (ValueError, KeyError, TypeError, AttributeError):  # written by another version: a miss
            return None

    async def put(self, key: str, reply: CachedReply) -> None:
        if not self.enabled:
            return
        try:
            kept = json.dumps(asdict(reply), ensure_ascii=False)
            await self._redis.set(_PREFIX + key, kept, px=self._ttl_ms)
        except RedisError as error:
            log.warning("reply cache unwritable, reply not kept: %s", error)
