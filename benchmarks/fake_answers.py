"""A fake OpenAI-compatible chat server that answers QA questions from the first excerpt it is shown,
streamed a few characters at a time at a steady pace, for the browser tests (tests/e2e) and the web
budget (benchmarks/web_budget.py): answers are quick and deterministic, citations are real (the chunk
ids come from the prompt, as a model that cites would give them), and every other agent (planner,
question generator, evaluator) gets a valid object of its schema from SchemaChatServer.

It notes the wall-clock time at which it sends the first piece of each streamed answer's text, so a
benchmark can compare it with the moment the text appears in the page."""

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from benchmarks.fake_model import PLAIN_REPLY, SchemaChatServer, completion, instance, sse_chunk

ANSWER = (
    "Each value in Rust has an **owner**, and there can only be one owner at a time. "
    "When the owner goes out of scope, the value is dropped."
)
_EXCERPT_ID = re.compile(r"\[(\d+)\]")
# Plausible text for the other agents' string fields (screenshots read better than a placeholder).
FIELDS = {
    "question": "What happens to a value when its owner goes out of scope?",
    "answer": "The value is dropped: its memory is freed.",
    "explanation": "Rust drops a value when its single owner goes out of scope.",
    "title": "The ownership rules",
    "goal": "Know who owns a value and when it is dropped.",
}

# Generated items take these in turn, so a bank of several is not rejected as near-duplicates of one.
QUESTIONS = (
    FIELDS["question"],
    "How many owners can a Rust value have at one time?",
    "What does assigning a String to another variable do to the first variable?",
    "Why does Rust need no garbage collector?",
)


def _placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PLAIN_REPLY)


def _plausible(value: Any) -> Any:
    """The schema's minimal object with FIELDS' text in place of the placeholder strings."""
    if isinstance(value, dict):
        return {k: FIELDS[k] if k in FIELDS and _placeholder(v) else _plausible(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plausible(v) for v in value]
    return value


class CitingChatServer(SchemaChatServer):
    """`with CitingChatServer() as server:` serves `server.url`; `first_text_at` lists, per streamed
    answer, the time.time() at which its first answer characters were sent."""

    def __init__(self, answer: str = ANSWER, piece_chars: int = 6, delay_s: float = 0.03) -> None:
        super().__init__()
        self.answer, self.piece_chars, self.delay_s = answer, piece_chars, delay_s
        self.first_text_at: list[float] = []
        self.generated = 0  # items generated so far: the next takes QUESTIONS[generated % len]

    async def _complete(self, request: Request) -> Response:
        body = await request.json()
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        properties = schema.get("properties", {})
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        cited = [int(m) for m in _EXCERPT_ID.findall(prompt)[:1]]
        # A generated question and a grade cite the first excerpt by its chunk id (the planner's `sources`
        # are topic numbers, which the schema's minimal [1] already is).
        cites = [name for name in ("sources", "used") if name in properties]
        if cites and ("question" in properties or "feedback" in properties):
            self.requests += 1
            reply = {**_plausible(instance(schema, schema, prompt)), **{name: cited for name in cites}}
            if "feedback" not in properties:  # the question generator's item, not a grade
                reply["question"] = QUESTIONS[self.generated % len(QUESTIONS)]
                self.generated += 1
            return JSONResponse(completion(json.dumps(reply)))
        if "has_answer" not in properties:
            if body.get("stream") or not properties:
                return await super()._complete(request)
            return JSONResponse(completion(json.dumps(_plausible(instance(schema, schema, prompt)))))
        self.requests += 1
        content = json.dumps({"has_answer": True, "answer": self.answer, "used_chunk_ids": cited})
        if not body.get("stream"):
            return JSONResponse(completion(content))
        return StreamingResponse(self._pieces(content), media_type="text/event-stream")

    async def _pieces(self, content: str) -> AsyncIterator[str]:
        text_starts = content.index(self.answer[:10])
        noted = False
        for i in range(0, len(content), self.piece_chars):
            await asyncio.sleep(self.delay_s)
            if not noted and i + self.piece_chars > text_starts:
                self.first_text_at.append(time.time())
                noted = True
            yield sse_chunk({"role": "assistant", "content": content[i : i + self.piece_chars]}, None)
        yield sse_chunk({}, "stop")
        usage: dict[str, Any] = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        yield sse_chunk({}, None, usage=usage)
        yield "data: [DONE]\n\n"
