"""The chat model: one ChatOpenAI for OpenAI, vLLM, Ollama or the embedded llama.cpp server."""

from typing import Literal

import httpx
from langchain_openai import ChatOpenAI

from core.llm.refusals import TolerantChatOpenAI
from core.settings import Settings

StructuredMode = Literal["llama-grammar", "json_schema", "function_calling"]


def make_chat_model(settings: Settings, *, base_url: str | None = None) -> ChatOpenAI:
    """`base_url` is the embedded server's when LLM_BASE_URL is unset."""
    url = base_url or settings.llm.base_url
    openai_proper = url is not None and "api.openai.com" in url
    # ChatOpenAI sends the limit as `max_completion_tokens`, which llama.cpp's server ignores; OpenAI
    # refuses both at once, so other servers get the classic `max_tokens` in the body instead.
    limit: dict[str, object] = (
        {"max_tokens": settings.llm.max_tokens}
        if openai_proper
        else {"extra_body": {"max_tokens": settings.llm.max_tokens}}
    )
    # Tolerant: a parameter the endpoint refuses (log-probabilities, temperature) is dropped, not fatal.
    return TolerantChatOpenAI(
        model=settings.llm.model,
        base_url=url,
        api_key=settings.llm.api_key or "not-needed",  # type: ignore[arg-type]  # local servers ignore it
        temperature=0,
        # A server that is down or unreachable fails within seconds (the API answers 503); a slow
        # answer still has the whole llm_timeout_s.
        timeout=httpx.Timeout(settings.llm.timeout_s, connect=settings.llm.connect_timeout_s),
        # langchain-openai's own 120 s limit between streamed chunks would cut a long prefill on a busy
        # machine (seen under load: the first chunk of an admitted answer came after > 120 s).
        stream_chunk_timeout=settings.llm.timeout_s,
        max_retries=1,
        stream_usage=True,
        **limit,  # type: ignore[arg-type]
    )


def output_cap(llm: object, max_tokens: int) -> dict[str, object]:
    """Call parameters (for bind or invoke) that cap one reply: in the body's `max_tokens` where the
    model sends its limit there (see make_chat_model), else as the model's own max_tokens."""
    extra = getattr(llm, "extra_body", None)
    if isinstance(extra, dict) and "max_tokens" in extra:
        return {"extra_body": {**extra, "max_tokens": max_tokens}}
    return {"max_tokens": max_tokens}
