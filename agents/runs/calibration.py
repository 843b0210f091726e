"""`studyai calibrate` for the answers' confidence: a project's approved questions (the teacher's
checked items) asked through the QA graph as a student would ask them, each reply scored against the
item's key (core/text/answers.py), and the calibration fitted on those replies (core/confidence/fit.py)
for the running chat and embedding model. Operator access: the command runs on the server.

Why a project's own bank: an external or newly served model starts uncalibrated (every label
"medium"); a teacher's approved items are the labelled questions the school already has."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from agents.common.context import AgentContext
from agents.qa.options import choice_question
from agents.runs.service import Graph
from core.confidence.fit import Sample
from core.text.answers import chosen_option, right_answer

MIN_REPLIES = 30  # fewer labelled replies than this fit nothing worth trusting


class NotEnoughQuestions(RuntimeError):
    pass


@dataclass(frozen=True)
class BankItem:
    id: UUID
    type: str  # "multiple_choice" or "short_answer"
    question: str
    answer: str
    distractors: list[str]

    @property
    def options(self) -> list[str]:
        """The options in a fixed order that does not put the key first (a small model favours A)."""
        return sorted([self.answer, *self.distractors], key=lambda text: (len(text), text))

    def asked(self) -> str:
        if self.type == "multiple_choice":
            return choice_question(self.question, self.options)
        return self.question


async def approved_items(pool: AsyncConnectionPool, project_id: UUID, limit: int) -> list[BankItem]:
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            "SELECT id, type, question, answer, distractors FROM questions"
            " WHERE project_id = %s AND review_state = 'approved' AND status <> 'archived'"
            " ORDER BY created_at, id LIMIT %s",
            (project_id, limit),
        )
        return [BankItem(**row) for row in await cur.fetchall()]


def is_right(item: BankItem, reply: str) -> bool:
    if item.type == "multiple_choice":
        picked = chosen_option(reply, item.options)
        return picked is not None and item.options[picked] == item.answer
    return right_answer(reply, [item.answer])


def sample_of(item: BankItem, result: dict[str, Any]) -> Sample | None:
    """The reply as a labelled sample; None when it claimed nothing to score (not found, declined)."""
    confidence = result.get("confidence")
    if not confidence:
        return None
    reply = result.get("guess") or result.get("answer", "")
    kind = "choice" if item.type == "multiple_choice" else "answer"
    return Sample(str(item.id), f"bank / {item.type}", kind, confidence["signals"], is_right(item, reply))


async def labelled_replies(
    graph: Graph,
    context: Callable[[], AgentContext],
    items: Sequence[BankItem],
    *,
    log: Callable[[str], None] = print,
) -> list[Sample]:
    """Each item asked once (a fresh context each), scored; `log` reports progress."""
    samples: list[Sample] = []
    for number, item in enumerate(items, start=1):
        result = await graph.ainvoke({"question": item.asked()}, context=context())
        sample = sample_of(item, result)
        if sample is not None:
            samples.append(sample)
        log(f"[{number}/{len(items)}] {item.type}: {'right' if sample and sample.right else 'wrong or none'}")
    if len(samples) < MIN_REPLIES or len({s.right for s in samples}) < 2:
        raise NotEnoughQuestions(
            f"{len(samples)} labelled replies ({sum(s.right for s in samples)} right): fitting needs at"
            f" least {MIN_REPLIES} with right and wrong ones among them; approve more of the bank's items"
        )
    return samples
