"""An answer's confidence and what it changes in the reply (core/confidence calibrates it):

- high: the answer as it is;
- medium: the answer, marked "check the passage", with its deciding sentence (the cited passage's
  sentence closest to the answer) highlighted;
- low: no answer claimed. The reply says the material does not let it answer with confidence and
  shows the passages that bear on the question, with their most relevant sentences highlighted and,
  for options, which options those passages state. The model's guess is kept as `guess` (the
  history, the evals), never shown as the answer.

A stream has already shown the answer's text when the confidence is known: a low one is withdrawn
with `reset` and replaced by the message."""

from typing import Any

from agents.common.context import AgentContext
from agents.qa.evidence import options_stated, passage, passages
from agents.qa.options import Choice
from agents.qa.signals import answer_self_check, answer_signals, source_fit
from agents.qa.state import QAState
from core.observability import timing
from core.retrieval import Candidate

UNSURE = {
    "en": "The material does not let me answer this with confidence. The passages below bear on it.",
    "pt": "O material não me permite responder a isto com confiança. Os trechos abaixo tratam disso.",
}
LOW_PASSAGES = 3


def judged(
    ctx: AgentContext,
    state: dict[str, Any],
    update: dict[str, Any],
    *,
    kind: str,
    signals: dict[str, float],
    chunks: list[Candidate],
    choice: Choice | None = None,
    write: Any = None,
) -> dict[str, Any]:
    """`update` (an answered reply) with its confidence and the label's effect on what is shown."""
    confidence = ctx.confidence.assess(kind, signals)
    update = update | {"confidence": confidence.as_dict()}
    if confidence.label == "medium":
        cited = {c.chunk_id for c in update.get("citations", [])}
        deciding = [c for c in chunks if c.chunk_id in cited][:1] or chunks[:1]
        answer = update["answer"].split("\n\n", 1)[-1] if choice else update["answer"]
        return update | {"passages": [passage(chunk, answer).model_dump() for chunk in deciding]}
    if confidence.label == "high":
        return update
    question = choice.stem if choice else state["question"]
    message = UNSURE.get(state["language"], UNSURE["en"])
    if write is not None:
        write({"reset": True})
        write({"token": message})
    low = update | {
        "answer": message,
        "guess": update["answer"],
        "has_answer": False,
        "outcome": "unsure",
        "passages": [p.model_dump() for p in passages(chunks[:LOW_PASSAGES], question)],
    }
    if choice is not None:
        low["options_stated"] = options_stated(choice, chunks)
    return low


async def with_confidence(
    ctx: AgentContext,
    state: QAState,
    update: dict[str, Any],
    chunks: list[Any],
    prompt: list[Any],
    reply_json: str,
    logprobs: dict[str, float],
    *,
    write: Any = None,
) -> dict[str, Any]:
    """An answered reply with its confidence (agents/qa/confidence.py); others as they are."""
    if update.get("outcome") != "answered":
        return update
    mark = timing.mark()
    self_yes = None
    if ctx.confidence.needs("answer", "self_yes"):  # a call only where the calibration kept it
        self_yes = await answer_self_check(ctx.llm, prompt, reply_json, ctx.usage)
    signals = answer_signals(
        question_in_source=source_fit(update["answer"], state["question"], [c.text for c in chunks]),
        logprobs=logprobs,
        support=update.get("support"),
        self_yes=self_yes,
        cited=len(update.get("citations", [])),
        invented=len(update.get("invented_ids", [])),
        answer_words=len(update["answer"].split()),
        gate=state["gate"],
    )
    ctx.timings_ms["confidence"] = timing.elapsed_ms(mark, 1)
    return judged(ctx, dict(state), update, kind="answer", signals=signals, chunks=chunks, write=write)
