"""The answer nodes' side of the kept replies (core/llm/reply_cache.py): the key of an answer call (its
project, model, parameters and messages), looked up before the run takes a turn at the model."""

from typing import Any

from agents.common.context import AgentContext
from agents.qa.config import QAConfig
from core.llm.reply_cache import CachedReply, reply_key
from core.llm.structured import model_name


async def kept_reply(
    ctx: AgentContext, qa: QAConfig, messages: list[Any], *, stream: bool
) -> tuple[str | None, CachedReply | None]:
    """The call's key (None: nothing is kept here) and the reply kept under it, if any. A streamed call asks
    for log-probabilities and a plain one does not: their replies are kept apart."""
    if ctx.replies is None or not ctx.replies.enabled:
        return None, None
    params = {"max_tokens": qa.answer_max_tokens, "mode": ctx.structured_mode, "logprobs": stream}
    key = reply_key(ctx.project_id, model_name(ctx.llm), params, messages)
    return key, await ctx.replies.get(key)


def mark_kept(ctx: AgentContext) -> None:
    """This reply is a kept one: the run's record says so (and it is not judged again, agents/runs/qa.py)."""
    ctx.timings_ms["reply_cached"] = 1.0


async def keep_reply(ctx: AgentContext, key: str | None, reply: CachedReply) -> None:
    if ctx.replies is not None and key is not None:
        await ctx.replies.put(key, reply)
