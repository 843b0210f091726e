"""A fast fake OpenAI-compatible chat server whose replies are valid objects of the JSON schema each
request asks for, so every agent route runs its whole path (plan, retrieve, answer, grade) in
milliseconds without a model.

The agents ask for structured output as llama.cpp does (`response_format: {"type": "json_object",
"schema": ...}`, core/llm/structured.py) or as OpenAI does (`json_schema`); the reply is built from that
schema: a field's default where it has one, else the smallest value its constraints allow, and for a
list of chunk ids the first excerpt id the prompt shows (`[123] ...`), as a model that cites would.
Streaming requests get the same text as server-sent chunks. Used by the fuzz run
(benchmarks/faults/fuzz.py)."""

import json
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp

PLAIN_REPLY = "A short answer from the fake model."
USAGE = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
_EXCERPT_ID = re.compile(r"\[(\d+)\]")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ThreadedServer:
    """An ASGI app under uvicorn in a daemon thread (its own event loop) on a free local port: `with`
    starts it and waits until it listens, and stops it on the way out."""

    def __init__(
        self, app: ASGIApp, *, start_timeout_s: float = 10, name: str = "the fake chat server"
    ) -> None:
        self.port = free_port()
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, daemon=True)
        self._start_timeout_s, self._name = start_timeout_s, name

    def __enter__(self) -> Self:
        self._thread.start()
        deadline = time.monotonic() + self._start_timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"{self._name} did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(30)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:  # pydantic writes "#/$defs/Name"
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def _text(schema: dict[str, Any]) -> str:
    low, high = int(schema.get("minLength", 0)), schema.get("maxLength")
    text = PLAIN_REPLY
    while len(text) < low:
        text += " " + PLAIN_REPLY
    return text if high is None else text[: int(high)]


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    value: float = 1 if integer else 0.9
    if low is not None:
        value = max(value, low + (1 if integer and "exclusiveMinimum" in schema else 0))
    if high is not None:
        value = min(value, high - (1 if integer and "exclusiveMaximum" in schema else 0))
    return int(value) if integer else float(value)


def instance(schema: dict[str, Any], root: dict[str, Any], prompt: str, name: str = "") -> Any:
    """A valid value of `schema` (a pydantic model's JSON schema, `root` holding its $defs)."""
    schema = _resolve(schema, root)
    if "default" in schema:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [_resolve(o, root) for o in schema[key]]
            chosen = next((o for o in options if o.get("type") != "null"), options[0])
            return instance(chosen, root, prompt, name)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties", {})
        return {key: instance(value, root, prompt, key) for key, value in properties.items()}
    if kind == "array":
        if "chunk" in name:  # cite the first excerpt shown, like a model that answers from it
            return [int(m) for m in _EXCERPT_ID.findall(prompt)[:1]]
        count = max(int(schema.get("minItems", 0)), 1)
        count = min(count, int(schema.get("maxItems", count)))
        item = schema.get("items", {"type": "string"})
        return [instance(item, root, prompt, name) for _ in range(count)]
    if kind == "string":
        return _text(schema)
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return True
    return None


def reply_for(body: dict[str, Any]) -> str:
    """The reply's text for one chat completion request."""
    messages = body.get("messages") or [{}]
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    fmt = body.get("response_format") or {}
    schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")
    if not isinstance(schema, dict):
        return PLAIN_REPLY
    return json.dumps(instance(schema, schema, prompt))


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": USAGE,
    }  # fmt: skip


def sse_chunk(delta: dict[str, Any], finish: str | None, **extra: Any) -> str:
    head = {"id": "fake", "object": "chat.completion.chunk", "created": 0, "model": "fake"}
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if delta or finish else []
    return f"data: {json.dumps({**head, 'choices': choices, **extra})}\n\n"


async def _stream(content: str) -> AsyncIterator[str]:
    for i in range(0, len(content), 16):
        yield sse_chunk({"role": "assistant", "content": content[i : i + 16]}, None)
    yield sse_chunk({}, "stop")
    yield sse_chunk({}, None, usage=USAGE)
    yield "data: [DONE]\n\n"


class SchemaChatServer(ThreadedServer):
    """`with SchemaChatServer() as server:` serves `server.url` (an OpenAI base URL) from a thread."""

    def __init__(self) -> None:
        self.requests = 0
        app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._complete, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),  # GET /health/ready probes it
            ]
        )
        super().__init__(app)
        self.app = app
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def add_route(self, path: str, endpoint: Callable[[Request], Awaitable[Response]]) -> None:
        """Another GET route (before the server starts), e.g. llama.cpp's /props."""
        self.app.router.routes.append(Route(path, endpoint, methods=["GET"]))

    async def _models(self, request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [{"id": "fake", "object": "model", "owned_by": "fake"}]}
        )

    async def _complete(self, request: Request) -> Response:
        return await self._reply(await request.json())

    async def _reply(self, body: dict[str, Any]) -> Response:
        """The response to one chat completion request's body."""
        self.requests += 1
        content = reply_for(body)
        if body.get("stream"):
            return StreamingResponse(_stream(content), media_type="text/event-stream")
        return JSONResponse(completion(content))
