"""One-token replies with their log-probabilities: a cheap score from the model (an option's letter, a
yes/no verdict) that reuses whatever prompt prefix the server has cached."""

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage

from agents.common.contrast import yes_share
from core.llm.chat import output_cap
from core.llm.structured import TokenUsage, model_name


async def one_token(
    llm: BaseChatModel, messages: list[BaseMessage], top_logprobs: int, usage: TokenUsage | None
) -> AIMessage | None:
    """A one-token reply with its top log-probs, counted in `usage`; None where the endpoint refuses
    log-probs."""
    bound = llm.bind(logprobs=True, top_logprobs=top_logprobs, **output_cap(llm, 1))
    try:
        reply = await bound.ainvoke(messages)
    except openai.BadRequestError:  # an endpoint that refuses log-probs
        return None
    if not isinstance(reply, AIMessage):
        return None
    if usage is not None:
        usage.add(model_name(llm), reply)
    return reply


async def yes_probability(
    llm: BaseChatModel, messages: list[BaseMessage], usage: TokenUsage | None
) -> float | None:
    """P(yes) / (P(yes) + P(no)) of a one-token reply; None where the endpoint gives no log-probs."""
    reply = await one_token(llm, messages, 20, usage)
    return None if reply is None else yes_share(reply)
