"""Asking a chat model for an object of a pydantic schema, the way each kind of server supports.

llama.cpp's server rejects `json_schema` but constrains decoding with a grammar when a schema is
given inside `{"type": "json_object"}`; OpenAI, vLLM and Ollama take `json_schema`; function calling is
there for endpoints that have neither. A reply that does not validate is retried once with the error shown to
the model, then fails clearly."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from core.llm.chat import StructuredMode

T = TypeVar("T", bound=BaseModel)


class StructuredOutputError(RuntimeError):
    """The model did not produce a valid object after one retry."""


@dataclass
class TokenUsage:
    """Tokens per model, summed over calls (an agent run adds its calls here)."""

    by_model: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, model: str, message: AIMessage) -> None:
        usage = message.usage_metadata or {}
        entry = self.by_model.setdefault(
            model, {"input_tokens": 0, "output_tokens": 0, "calls": 0, "cached_input_tokens": 0}
        )
        entry["input_tokens"] += int(usage.get("input_tokens", 0))
        entry["output_tokens"] += int(usage.get("output_tokens", 0))
        # The server's prompt cache (llama-server and OpenAI report it): what the call did not prefill.
        cached = int((usage.get("input_token_details") or {}).get("cache_read", 0) or 0)
        entry["cached_input_tokens"] += cached
        # What the server had to process of the prompts: the reply's share of the model's time to answer.
        entry["prefill_tokens"] = entry.get("prefill_tokens", 0) + int(usage.get("input_tokens", 0)) - cached
        if entry["calls"] == 0:  # the first call's new tokens: the question's own prompt after the prefix
            entry["first_call_uncached_tokens"] = int(usage.get("input_tokens", 0)) - cached
        entry["calls"] += 1


def model_name(llm: BaseChatModel) -> str:
    return str(getattr(llm, "model_name", None) or getattr(llm, "model", None) or type(llm).__name__)


def _cut_reply(error: openai.LengthFinishReasonError) -> tuple[AIMessage, Callable[[], Any]]:
    """A reply that reached the output cap: its JSON is cut. The OpenAI client refuses such a reply to a
    request with `response_format` by raising; it is an invalid reply like any other (retried once)."""
    completion = error.completion
    usage = completion.usage
    reply = AIMessage(
        content=(completion.choices[0].message.content or "") if completion.choices else "",
        usage_metadata={
            "input_tokens": usage.prompt_tokens if usage else 0,
            "output_tokens": usage.completion_tokens if usage else 0,
            "total_tokens": usage.total_tokens if usage else 0,
        },
    )

    def parse() -> Any:
        raise ValueError("the reply was cut at the output token limit; a shorter one is needed")

    return reply, parse


def grammar_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema the llama.cpp grammar decodes: the model's JSON schema with its `grammar_bounds`
    (a class attribute: property name -> JSON-schema keywords such as maxLength, maxItems, and
    `items` for the elements) merged in. Why: a small model can loop inside a string or a list until
    the output cap cuts its JSON, which fails the call; bounds the grammar enforces end the string or
    list instead. Only the grammar gets them: pydantic does not reject a longer value from a server
    that ignores them, and OpenAI's strict schemas refuse some of these keywords."""
    json_schema = schema.model_json_schema()
    bounds: dict[str, dict[str, Any]] = getattr(schema, "grammar_bounds", {})
    for name, keywords in bounds.items():
        _merge(json_schema["properties"][name], keywords)
    return json_schema


def response_format(schema: type[BaseModel], mode: StructuredMode) -> dict[str, Any]:
    """The request's response_format: llama.cpp's grammar (json_object with a schema), or json_schema.
    The reply is parsed from the message's text either way, so an endpoint that refuses json_schema
    can be asked with the schema in the instructions instead (core/llm/refusals.py)."""
    if mode == "llama-grammar":
        return {"type": "json_object", "schema": grammar_schema(schema)}
    named = {"name": schema.__name__, "schema": schema.model_json_schema()}
    return {"type": "json_schema", "json_schema": named}


def _merge(target: dict[str, Any], keywords: dict[str, Any]) -> None:
    for key, value in keywords.items():
        if isinstance(value, dict) and isinstance(target.get(key), dict):
            _merge(target[key], value)
        else:
            target[key] = value


async def _ask_once(
    llm: BaseChatModel, schema: type[T], messages: list[BaseMessage], mode: StructuredMode
) -> Any:
    try:
        return await _ask_for(llm, schema, messages, mode)
    except openai.LengthFinishReasonError as error:
        return _cut_reply(error)


async def _ask_for(
    llm: BaseChatModel, schema: type[T], messages: list[BaseMessage], mode: StructuredMode
) -> Any:
    if mode in ("llama-grammar", "json_schema"):
        reply = await llm.bind(response_format=response_format(schema, mode)).ainvoke(messages)
        return reply, lambda: schema.model_validate_json(content_text(reply))
    runnable = llm.with_structured_output(schema, method="function_calling", include_raw=True)
    outcome = await runnable.ainvoke(messages)

    def parsed() -> T:
        if outcome.get("parsing_error") or outcome.get("parsed") is None:
            raise ValueError(str(outcome.get("parsing_error") or "no structured reply"))
        return outcome["parsed"]

    return outcome["raw"], parsed


def content_text(reply: BaseMessage) -> str:
    content = reply.content
    return content if isinstance(content, str) else "".join(str(part) for part in content)


async def ask_structured(
    llm: BaseChatModel,
    schema: type[T],
    messages: list[BaseMessage],
    *,
    mode: StructuredMode,
    usage: TokenUsage | None = None,
) -> T:
    attempt_messages = list(messages)
    for attempt in (1, 2):
        raw, parse = await _ask_once(llm, schema, attempt_messages, mode)
        if usage is not None and isinstance(raw, AIMessage):
            usage.add(model_name(llm), raw)
        try:
            return parse()
        except (ValidationError, ValueError) as error:
            if attempt == 2:
                raise StructuredOutputError(
                    f"the model's reply did not match {schema.__name__} after a retry: {error}"
                ) from error
            attempt_messages = [
                *messages,
                AIMessage(content=content_text(raw) if isinstance(raw, BaseMessage) else str(raw)),
                HumanMessage(
                    content=f"That reply was not valid JSON for the schema ({str(error)[:300]}). "
                    "Answer again with only the JSON object."
                ),
            ]
    raise AssertionError("unreachable")
