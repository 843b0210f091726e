"""Streaming a structured answer: the model writes the same JSON object as without streaming,
and the text of its `answer` string is decoded and passed on as it arrives.

One schema for both paths keeps one prompt, one grammar and the model's own `has_answer` and
`used_chunk_ids`; only the JSON modes whose text arrives as message content can stream this way
(llama.cpp's grammar, OpenAI's json_schema). Function calling answers in one piece."""

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessageChunk, BaseMessage
from pydantic import BaseModel

from core.llm.chat import StructuredMode
from core.llm.structured import response_format


def streams_content(mode: StructuredMode) -> bool:
    return mode in ("llama-grammar", "json_schema")


def bind_json(llm: BaseChatModel, schema: type[BaseModel], mode: StructuredMode) -> Any:
    if mode == "llama-grammar":  # the answer streams without the grammar's bounds (the text is capped)
        return llm.bind(response_format={"type": "json_object", "schema": schema.model_json_schema()})
    return llm.bind(response_format=response_format(schema, mode))


class JsonStream:
    """Iterating yields the raw JSON so far after each streamed piece; `message` then holds the
    whole reply (with its token usage)."""

    def __init__(
        self, llm: BaseChatModel, schema: type[BaseModel], messages: list[BaseMessage], mode: StructuredMode
    ) -> None:
        self._runnable = bind_json(llm, schema, mode)
        self._messages = messages
        self.raw = ""
        self.message: AIMessageChunk | None = None
        self.cut_off = False

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            async for piece in self._runnable.astream(self._messages):
                self.message = piece if self.message is None else self.message + piece
                self.raw += str(piece.text)
                yield self.raw
        except openai.LengthFinishReasonError:
            # The reply reached its token cap: the client raises instead of ending the stream. What
            # arrived stands, and the caller reads it as a cut-off reply (`raw` is not valid JSON).
            self.cut_off = True


def string_field(raw: str, field: str) -> str | None:
    """The decoded prefix of a JSON string field in partial JSON; None until it has begun.
    An escape cut off at the end (or half a surrogate pair) waits until it is complete."""
    start = re.search(rf'"{re.escape(field)}"\s*:\s*"', raw)
    if start is None:
        return None
    i = safe = start.end()
    while i < len(raw) and raw[i] != '"':
        if raw[i] == "\\":
            width = 6 if raw[i + 1 : i + 2] == "u" else 2
            if i + width > len(raw):
                break
            i += width
        else:
            i += 1
        safe = i
    try:
        text = json.loads(f'"{raw[start.end() : safe]}"')
    except json.JSONDecodeError:  # a control character the grammar let through: drop what is odd
        text = raw[start.end() : safe].encode("utf-8", "ignore").decode("unicode_escape", "ignore")
    if text and "\ud800" <= text[-1] <= "\udbff":
        text = text[:-1]
    return text


def bool_field(raw: str, field: str) -> bool | None:
    match = re.search(rf'"{re.escape(field)}"\s*:\s*(true|false)', raw)
    return None if match is None else match.group(1) == "true"


def int_list_field(raw: str, field: str) -> list[int]:
    """The ids of a complete or cut-off integer list, for a reply that did not validate."""
    match = re.search(rf'"{re.escape(field)}"\s*:\s*\[([^\]]*)', raw)
    if match is None:
        return []
    try:
        return [int(x) for x in json.loads(f"[{match.group(1).strip().rstrip(',')}]") if isinstance(x, int)]
    except json.JSONDecodeError:
        return []
