"""OpenAI-compatible chat servers that behave as real providers do where they differ from the embedded
llama.cpp server, for the conformance tests (tests/backend/test_model_conformance.py): each refuses or
leaves out what its provider does, and otherwise answers as CitingChatServer (every agent gets a
plausible, citing reply).

The behaviours are the documented ones: OpenAI's reasoning models answer 403 to log-probabilities and
400 to a temperature other than 1; some servers answer 400 to log-probabilities; others send none
without saying so; some have no `json_schema` response format; a rate limit answers 429 with
Retry-After; some streams end without a usage chunk even when asked for one."""

import json
import re
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from starlette.responses import JSONResponse, Response, StreamingResponse

from benchmarks.fake_answers import CitingChatServer
from core.llm.refusals import SCHEMA_INSTRUCTION


@dataclass(frozen=True)
class Behaviour:
    logprobs: Literal["given", "refused-400", "refused-403", "absent"] = "given"
    temperature_rejected: bool = False  # only the default (1) is accepted
    json_schema: bool = True  # False: response_format json_schema answers 400
    rate_limited_first: int = 0  # this many requests answered 429 with Retry-After: 1 first
    stream_usage: bool = True  # False: no usage chunk, even when stream_options asks for one


def _error(status: int, message: str, param: str | None, **headers: str) -> JSONResponse:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": None}}
    return JSONResponse(body, status_code=status, headers=headers)


class ProviderChatServer(CitingChatServer):
    """`with ProviderChatServer(Behaviour(...)) as server:` serves `server.url`; `bodies` keeps every
    request body it answered (refused ones too), `refusals` counts its 4xx replies."""

    def __init__(self, behaviour: Behaviour) -> None:
        super().__init__(delay_s=0.0)
        self.behaviour = behaviour
        self.bodies: list[dict[str, Any]] = []
        self.refusals = 0
        self._rate_limited = 0

    async def _reply(self, body: dict[str, Any]) -> Response:
        self.bodies.append(body)
        refusal = self._refusal(body)
        if refusal is not None:
            self.refusals += 1
            return refusal
        response = await super()._reply(_schema_from_instructions(body))
        if self.behaviour.logprobs == "absent" and isinstance(response, JSONResponse):
            reply = json.loads(bytes(response.body))
            for choice in reply.get("choices", []):
                choice["logprobs"] = None
            return JSONResponse(reply)
        if not self.behaviour.stream_usage and isinstance(response, StreamingResponse):
            return StreamingResponse(_without_usage(response.body_iterator), media_type="text/event-stream")
        return response

    def _refusal(self, body: dict[str, Any]) -> JSONResponse | None:
        behaviour = self.behaviour
        if self._rate_limited < behaviour.rate_limited_first:
            self._rate_limited += 1
            body = {"error": {"message": "Rate limit reached; try again in 1s.", "type": "requests"}}
            return JSONResponse(body, status_code=429, headers={"Retry-After": "1"})
        if body.get("logprobs") and behaviour.logprobs == "refused-403":
            return _error(403, "You are not allowed to request logprobs from this model", None)
        if body.get("logprobs") and behaviour.logprobs == "refused-400":
            return _error(400, "logprobs is not supported by this model", "logprobs")
        if behaviour.temperature_rejected and body.get("temperature", 1) != 1:
            message = (
                f"Unsupported value: 'temperature' does not support {body['temperature']} with this model."
                " Only the default (1) value is supported."
            )
            return _error(400, message, "temperature")
        fmt = body.get("response_format") or {}
        if not behaviour.json_schema and fmt.get("type") == "json_schema":
            return _error(400, "response_format.type 'json_schema' is not supported", "response_format")
        return None


def _schema_from_instructions(body: dict[str, Any]) -> dict[str, Any]:
    """A request that carries its schema in the instructions (core/llm/refusals.py) is answered as if
    the schema were in its response format: the fake has no other way to know what to write."""
    fmt = body.get("response_format") or {}
    if fmt.get("schema") or fmt.get("json_schema"):
        return body
    for message in body.get("messages", []):
        found = re.search(
            re.escape(SCHEMA_INSTRUCTION) + r"(\{.*\})\s*$", str(message.get("content", "")), re.S
        )
        if found:
            return {**body, "response_format": {"type": "json_object", "schema": json.loads(found.group(1))}}
    return body


async def _without_usage(pieces: AsyncIterable[Any]) -> AsyncIterator[Any]:
    async for piece in pieces:
        text = piece.decode() if isinstance(piece, bytes) else str(piece)
        if '"usage"' not in text:
            yield piece
