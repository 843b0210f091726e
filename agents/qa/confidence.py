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
