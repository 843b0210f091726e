"""The kept replies' key and store (core/llm/reply_cache.py): a key changes with the project, the model, the
call's parameters and any message; a Redis that fails is a miss and keeps nothing, never an error; a
cache set to 0 seconds keeps nothing."""

import uuid

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from redis.asyncio import Redis

from core.llm.reply_cache import CachedReply, ReplyCache, reply_key
from core.runtime.services import ServiceUrls

PROJECT = uuid.uuid4()
MESSAGES = [
    SystemMessage(content="Answer from the excerpts."),
    HumanMessage(content="[7] Ownership: ...\nQ?"),
]
PARAMS = {"max_tokens": 200, "logprobs": True}


def test_the_key_changes_with_everything_the_reply_depends_on() -> None:
    key = reply_key(PROJECT, "qwen", PARAMS, MESSAGES)
    assert key == reply_key(PROJECT, "qwen", dict(PARAMS), list(MESSAGES))
    changed = [
        reply_key(uuid.uuid4(), "qwen", PARAMS, MESSAGES),  # another class
        reply_key(PROJECT, "llama", PARAMS, MESSAGES),  # another model
        reply_key(PROJECT, "qwen", {**PARAMS, "max_tokens": 100}, MESSAGES),
        reply_key(
            PROJECT, "qwen", PARAMS, [MESSAGES[0], HumanMessage(content="[7] Ownership (v2): ...\nQ?")]
        ),
        reply_key(PROJECT, "qwen", PARAMS, [SystemMessage(content="Other rules."), MESSAGES[1]]),
    ]
    assert len({key, *changed}) == 6


async def test_a_failing_redis_is_a_miss_and_keeps_nothing() -> None:
    unreachable = Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.5)
    cache = ReplyCache(unreachable, 60)
    await cache.put("k", CachedReply(raw="{}", logprobs={}))  # no error
    assert await cache.get("k") is None
    await unreachable.aclose()


@pytest.fixture
async def redis(services: ServiceUrls) -> Redis:
    return Redis.from_url(services.redis_url)


async def test_kept_for_its_time_and_not_at_all_at_zero(redis: Redis) -> None:
    key = f"test-{uuid.uuid4()}"
    reply = CachedReply(raw='{"answer": "é dropped"}', logprobs={"mean": -0.2, "min": -1.5})
    off = ReplyCache(redis, 0)
    await off.put(key, reply)
    assert await off.get(key) is None and await ReplyCache(redis, 60).get(key) is None
    kept = ReplyCache(redis, 60)
    await kept.put(key, reply)
    assert await kept.get(key) == reply
    assert 0 < await redis.pttl("studyai:reply:" + key) <= 60_000
    await redis.delete("studyai:reply:" + key)
    await redis.aclose()
