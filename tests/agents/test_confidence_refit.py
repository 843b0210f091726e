"""`studyai calibrate`'s confidence refit: approved items asked as a student would, each reply scored
against the item's key, too few labelled replies refused."""

import uuid
from typing import Any

import pytest

from agents.qa.options import parse_choice
from agents.runs.calibration import MIN_REPLIES, BankItem, NotEnoughQuestions, labelled_replies, sample_of
from core.confidence.fit import fit_calibration

CHOICE = BankItem(
    uuid.uuid4(),
    "multiple_choice",
    "What does a move do?",
    "Transfers ownership",
    ["Copies it", "Deep clones the heap data"],
)
SHORT = BankItem(
    uuid.uuid4(), "short_answer", "What frees a value?", "dropping it when its owner goes out of scope", []
)


def reply(answer: str, margin: float, *, guess: bool = False) -> dict[str, Any]:
    confidence = {"p": None, "label": "medium", "signals": {"margin": margin}}
    return (
        {"answer": "unsure", "guess": answer, "confidence": confidence}
        if guess
        else {"answer": answer, "confidence": confidence}
    )


def test_an_item_is_asked_as_a_pasted_question_and_scored_against_its_key() -> None:
    choice = parse_choice(CHOICE.asked())
    assert choice is not None and sorted(choice.options) == sorted([CHOICE.answer, *CHOICE.distractors])
    key = "ABC"[CHOICE.options.index(CHOICE.answer)]
    right = sample_of(CHOICE, reply(f"{key}) {CHOICE.answer}\n\nBecause.", 0.9))
    assert right is not None and right.right and right.kind == "choice"
    wrong_letter = "ABC"[CHOICE.options.index("Copies it")]
    assert sample_of(CHOICE, reply(f"{wrong_letter}) Copies it", 0.2)).right is False  # type: ignore[union-attr]
    # An unsure reply is scored on the model's guess; a reply claiming nothing is no sample.
    assert sample_of(SHORT, reply("It is dropped when its owner goes out of scope.", 0.5, guess=True)).right  # type: ignore[union-attr]
    assert sample_of(SHORT, {"answer": "not found", "confidence": None}) is None


class Graph:
    def __init__(self, replies: list[dict[str, Any]]) -> None:
        self.replies, self.asked = replies, []

    async def ainvoke(self, inputs: Any, config: Any = None, *, context: Any = None) -> Any:
        self.asked.append(inputs["question"])
        return self.replies[len(self.asked) - 1]


async def test_enough_labelled_replies_fit_a_calibration_and_too_few_are_refused() -> None:
    items = [SHORT] * MIN_REPLIES
    replies = [
        reply(SHORT.answer if i % 2 else "a garbage collector", 0.8 if i % 2 else 0.2)
        for i in range(MIN_REPLIES)
    ]
    samples = await labelled_replies(Graph(replies), lambda: None, items, log=lambda _: None)  # type: ignore[arg-type,return-value]
    assert [s.right for s in samples] == [bool(i % 2) for i in range(MIN_REPLIES)]
    fitted = fit_calibration(samples, chat_model="host/m", embedding_model="e", fitted_on="test")
    assert fitted.kinds["answer"].coefficients[0] > 0  # the margin tells right from wrong
    with pytest.raises(NotEnoughQuestions, match="at least 30"):
        await labelled_replies(Graph(replies[:5]), lambda: None, items[:5], log=lambda _: None)  # type: ignore[arg-type,return-value]
