"""A fake OpenAI-compatible chat server that answers QA questions from the first excerpt it is shown,
streamed a few characters at a time at a steady pace, for the browser tests (tests/e2e) and the web
budget (benchmarks/load/web_budget.py): answers are quick and deterministic, citations are real (the chunk
ids come from the prompt, as a model that cites would give them), and every other agent (planner,
question generator, evaluator) gets a valid object of its schema from SchemaChatServer.

It notes the wall-clock time at which it sends the first piece of each streamed answer's text, so a
benchmark can compare it with the moment the text appears in the page.

The answer path's one-token self-check (agents/qa/signals.py: "is every claim stated in the
excerpts? yes/no", asked with log-probabilities) gets a reply whose top log-probs put P(yes) at
SELF_CHECK_YES for a marker word of the question (the browser tests ask for each confidence label
that way), else DEFAULT_YES. A question with a WORD_ANSWERS word gets that answer (math, code)."""

import asyncio
import json
import math
import re
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import JSONResponse, Response, StreamingResponse

from agents.qa.signals import ANSWER_CHECK, CHOICE_CHECK
from benchmarks.fake_model import PLAIN_REPLY, SchemaChatServer, completion, instance, sse_chunk

ANSWER = (
    "Each value in Rust has an **owner**, and there can only be one owner at a time. "
    "When the owner goes out of scope, the value is dropped."
)
ANSWER_PT = (
    "Cada valor em Rust tem um **dono**, e só pode haver um dono por vez. "
    "Quando o dono sai do escopo, o valor é descartado."
)
# A question with one of these words (English, Portuguese) gets this answer instead, drawn from the
# course of tests/e2e/test_rendering.py (whose material holds its words): formulas, inline and displayed,
# beside a dollar amount that is not math; code. Any other question gets `answer` as before.
_BOX_CODE = "```python\nbox.width = box.width + 50\nbox.height = box.height + 100\n```"
WORD_ANSWERS = {
    "formula": (
        "The area of a circle of radius $r$ is $A = \\pi r^2$, and its circumference is\n\n"
        "$$C = 2 \\pi r$$\n\nA ticket costs $5 and a book costs $10."
    ),
    "fórmula": (
        "A área de um círculo de raio $r$ é $A = \\pi r^2$, e o seu perímetro é\n\n"
        "$$C = 2 \\pi r$$\n\nUm bilhete custa $5 e um livro custa $10."
    ),
    "rectangle": f"To change the size of a rectangle, modify the values of width and height:\n\n{_BOX_CODE}",
    "retângulo": f"Para mudar o tamanho de um retângulo, altere os valores de width e height:\n\n{_BOX_CODE}",
}
_EXCERPT_ID = re.compile(r"\[(\d+)\]")
_QUESTION = re.compile(r"^Question: (.*)$", re.M)
# P(yes) of the self-check by a word of the question (English and Portuguese), else DEFAULT_YES.
SELF_CHECK_YES = {"briefly": 0.5, "resumidamente": 0.5, "guess": 0.05, "palpite": 0.05}
DEFAULT_YES = 0.95
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

    def __init__(
        self,
        answer: str = ANSWER,
        piece_chars: int = 6,
        delay_s: float = 0.03,
        *,
        answer_pt: str = ANSWER_PT,
    ) -> None:
        super().__init__()
        self.answer, self.answer_pt, self.piece_chars, self.delay_s = answer, answer_pt, piece_chars, delay_s
        self.first_delay_s = 0.0  # a pause before a streamed answer's first piece (a test may set it)
        self.first_text_at: list[float] = []
        self.generated = 0  # items generated so far: the next takes QUESTIONS[generated % len]

    async def _reply(self, body: dict[str, Any]) -> Response:
        fmt = body.get("response_format") or {}
        schema = fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema") or {}
        properties = schema.get("properties", {})
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if body.get("logprobs") and _is_self_check(body):
            self.requests += 1
            return JSONResponse(yes_no_completion(self_check_yes(prompt)))
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
        if "lines" in properties and "audio overview" in prompt:  # agents/writer/script.py
            self.requests += 1
            return JSONResponse(completion(json.dumps(script_reply(prompt))))
        if "has_answer" not in properties:
            if body.get("stream") or not properties:
                return await super()._reply(body)
            return JSONResponse(completion(json.dumps(_plausible(instance(schema, schema, prompt)))))
        self.requests += 1
        answer = word_answer(prompt) or (self.answer_pt if "in Portuguese" in prompt else self.answer)
        content = json.dumps({"has_answer": True, "answer": answer, "used_chunk_ids": cited})
        if not body.get("stream"):
            return JSONResponse(completion(content))
        return StreamingResponse(self._pieces(content, answer), media_type="text/event-stream")

    async def _pieces(self, content: str, answer: str) -> AsyncIterator[str]:
        text_starts = content.index(json.dumps(answer)[1:11])
        noted = False
        await asyncio.sleep(self.first_delay_s)
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


# An audio overview's script: one line per excerpt shown (its first sentence, citing its number), then one
# citing a number no excerpt has, which the writer must drop (tests/e2e/test_audio_overview.py).
_SOURCE_BLOCK = re.compile(r"^\[(\d+)\] [^\n]*\n([^\n]+)", re.M)
INVENTED_LINE = {"text": "This line cites an excerpt that was never shown.", "source": 99}


def script_reply(prompt: str) -> dict[str, Any]:
    lines = []
    for number, text in _SOURCE_BLOCK.findall(prompt):
        sentence = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
        lines.append({"text": sentence[:240], "source": int(number)})
    return {"lines": [*lines[:15], INVENTED_LINE]}


def _is_self_check(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    asked = str(messages[-1].get("content", ""))
    return asked == ANSWER_CHECK or asked.endswith(CHOICE_CHECK.split("}", 1)[1])


def word_answer(prompt: str) -> str | None:
    """WORD_ANSWERS' answer for the prompt's question (its `Question: ...` line), if it has one's word."""
    question = (_QUESTION.findall(prompt) or [""])[-1].lower()
    return next((answer for word, answer in WORD_ANSWERS.items() if word in question), None)


def self_check_yes(prompt: str) -> float:
    """P(yes) for the question the prompt asks (its `Question: ...` line)."""
    question = (_QUESTION.findall(prompt) or [""])[-1].lower()
    return next((p for word, p in SELF_CHECK_YES.items() if word in question), DEFAULT_YES)


def yes_no_completion(p_yes: float) -> dict[str, Any]:
    """A one-token reply with OpenAI-style log-probs: P(yes) = p_yes, P(no) = 1 - p_yes."""
    top = [
        {"token": "yes", "logprob": math.log(p_yes), "bytes": None},
        {"token": "no", "logprob": math.log(1 - p_yes), "bytes": None},
    ]
    reply = completion("yes" if p_yes >= 0.5 else "no")
    token = {**top[0 if p_yes >= 0.5 else 1], "top_logprobs": top}
    reply["choices"][0]["logprobs"] = {"content": [token]}
    return reply
