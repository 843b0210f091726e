"""A chat model that learns which request parameters its endpoint refuses, and stops sending them.

Providers differ in what an OpenAI-compatible request may carry: reasoning models refuse
log-probabilities (403) and any `temperature` but the default (400) and want `max_completion_tokens`;
some servers have no `json_schema` response format, or no `stream_options`. The agents ask for what
serves them best; a refused parameter is dropped (or replaced by its nearest equivalent) and the call
retried once, and the endpoint is remembered so later calls do not pay the refusal again. What the
reply then lacks (log-probabilities) is missing from its confidence signals, which says so
(core/confidence/model.py), instead of the agent failing. Written here because the refusals are each
provider's own and langchain-openai passes them through as errors."""

import json
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

import openai
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_openai import ChatOpenAI
from pydantic import Field

log = logging.getLogger(__name__)

Refusable = Literal["logprobs", "temperature", "max_tokens", "json_schema", "json_object", "stream_options"]
# The error text that names each parameter, in the order they are looked for: a response_format
# error may quote the schema's own words, so the format is checked first.
_NAMES: tuple[tuple[Refusable, tuple[str, ...]], ...] = (
    ("json_schema", ("json_schema", "response_format", "structured output")),
    ("logprobs", ("logprobs",)),
    ("temperature", ("temperature",)),
    ("max_tokens", ("max_tokens",)),
    ("stream_options", ("stream_options", "include_usage")),
)
_REFUSALS = (openai.BadRequestError, openai.PermissionDeniedError, openai.UnprocessableEntityError)
SCHEMA_INSTRUCTION = "Reply with one JSON object that fits this JSON schema: "


class TolerantChatOpenAI(ChatOpenAI):
    """ChatOpenAI that retries a refused call without the parameter the endpoint refused."""

    refused: set[str] = Field(default_factory=set, exclude=True)

    def _get_request_payload(
        self, input_: Any, *, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        payload = super()._get_request_payload(input_, stop=stop, **kwargs)
        return without_refused(payload, self.refused)

    async def _agenerate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        for _ in range(len(_NAMES) + 1):
            try:
                return await super()._agenerate(messages, *args, **kwargs)
            except _REFUSALS as error:
                if not self._learn(error, kwargs):
                    raise
        return await super()._agenerate(messages, *args, **kwargs)

    async def _astream(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> AsyncIterator[ChatGenerationChunk]:
        for _ in range(len(_NAMES) + 1):
            started = False
            try:
                async for chunk in super()._astream(messages, *args, **kwargs):
                    started = True
                    yield chunk
                return
            except _REFUSALS as error:
                if started or not self._learn(error, kwargs):
                    raise
        async for chunk in super()._astream(messages, *args, **kwargs):
            yield chunk

    def _learn(self, error: openai.APIStatusError, kwargs: dict[str, Any]) -> bool:
        """Whether the refusal names a parameter this call sent that can be done without; remembered."""
        parameter = refused_parameter(error, self._sent(kwargs))
        if parameter is None:
            return False
        if parameter == "json_schema" and "json_schema" in self.refused:
            parameter = "json_object"  # json_object was the fallback, and it is refused too
        if parameter not in self.refused:
            log.warning(
                "the chat model %s refused %r (%s %s): sending it no more",
                self.model_name, parameter, error.status_code, type(error).__name__,
            )  # fmt: skip
            self.refused.add(parameter)
        return True

    def _sent(self, kwargs: dict[str, Any]) -> set[str]:
        sent = {"temperature", "max_tokens", "stream_options"} - self.refused
        if kwargs.get("logprobs") or self.logprobs:
            sent.add("logprobs")
        if kwargs.get("response_format") is not None:
            sent.add("json_schema")
        return sent


def refused_parameter(error: openai.APIStatusError, sent: set[str]) -> Refusable | None:
    """The parameter a 400/403/422 names (its body's `param`, else its message), among those sent."""
    body: dict[str, Any] = error.body if isinstance(error.body, dict) else {}
    nested = body.get("error")
    detail: dict[str, Any] = nested if isinstance(nested, dict) else body
    text = " ".join(str(part) for part in (detail.get("param"), detail.get("message"), error.message)).lower()
    for parameter, names in _NAMES:
        if parameter in sent and any(name in text for name in names):
            return parameter
    return None


def without_refused(payload: dict[str, Any], refused: set[str]) -> dict[str, Any]:
    """The request without what the endpoint refused, each replaced by its nearest equivalent."""
    if "logprobs" in refused:
        payload.pop("logprobs", None)
        payload.pop("top_logprobs", None)
    if "temperature" in refused:
        payload.pop("temperature", None)
    if "stream_options" in refused:
        payload.pop("stream_options", None)
    if "max_tokens" in refused:
        extra = dict(payload.get("extra_body") or {})
        limit = payload.pop("max_tokens", None) or extra.pop("max_tokens", None)
        if limit is not None:
            payload["max_completion_tokens"] = limit
        if "extra_body" in payload:
            payload["extra_body"] = extra
    if "json_schema" in refused and isinstance(payload.get("response_format"), dict):
        payload = _schema_in_prompt(payload, keep_json_object="json_object" not in refused)
    return payload


def _schema_in_prompt(payload: dict[str, Any], *, keep_json_object: bool) -> dict[str, Any]:
    """The schema moves from the response format into the instructions; the format stays "JSON" where
    the endpoint has that (json_object), else goes."""
    response_format = payload.pop("response_format")
    schema = response_format.get("schema") or (response_format.get("json_schema") or {}).get("schema")
    if keep_json_object:
        payload["response_format"] = {"type": "json_object"}
    if schema:
        instruction = SCHEMA_INSTRUCTION + json.dumps(schema, separators=(",", ":"))
        messages = [dict(message) for message in payload.get("messages", [])]
        if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
            messages[0]["content"] = f"{messages[0]['content']}\n{instruction}"
        else:
            messages.insert(0, {"role": "system", "content": instruction})
        payload["messages"] = messages
    return payload
