"""The labelled grading set (evals/data/grading/README.md): questions, their five answers, the split."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "grading"

Split = Literal["dev", "test"]
KINDS = ("correct", "partially_correct", "incorrect", "off_topic", "injected")
LABELS = ("correct", "partially_correct", "incorrect", "off_topic")
# The ordinal grade of a label or of a verdict: off topic is as wrong as wrong.
GRADE = {"off_topic": 0, "incorrect": 0, "partially_correct": 1, "correct": 2}


@dataclass(frozen=True)
class Answer:
    kind: str  # what the answer was written to be (one of KINDS)
    label: str  # the grade its content deserves (one of LABELS); for "injected", not the injection's ask
    text: str


@dataclass(frozen=True)
class Question:
    id: str
    language: Literal["en", "pt"]
    source_file: str  # under ../shared/data
    source_section: str
    question: str
    reference_answer: str
    answers: tuple[Answer, ...]

    def as_row(self) -> dict[str, Any]:
        """The shape of a stored question row (core/store/questions.py) that the evaluator reads. No
        document: the grader has the reference answer and no excerpts, as for a question whose document
        was deleted; retrieval quality is the retrieval eval's business."""
        return {
            "id": self.id,
            "type": "short_answer",
            "question": self.question,
            "answer": self.reference_answer,
            "distractors": [],
            "explanation": None,
            "document_id": None,
            "source_chunk_ids": [],
        }


def parse_question(line: dict[str, Any]) -> Question:
    answers = tuple(Answer(a["kind"], a["label"], a["text"]) for a in line["answers"])
    question = Question(
        id=line["id"],
        language=line["language"],
        source_file=line["source"]["file"],
        source_section=line["source"]["section"],
        question=line["question"],
        reference_answer=line["reference_answer"],
        answers=answers,
    )
    problems = validate(question)
    if problems:
        raise ValueError(f"{question.id}: {'; '.join(problems)}")
    return question


def validate(question: Question) -> list[str]:
    problems = []
    if question.language not in ("en", "pt"):
        problems.append(f"language {question.language!r}")
    if sorted(a.kind for a in question.answers) != sorted(KINDS):
        problems.append(f"answer kinds {[a.kind for a in question.answers]}, want one of each of {KINDS}")
    for answer in question.answers:
        if answer.label not in LABELS:
            problems.append(f"label {answer.label!r}")
        elif answer.kind != "injected" and answer.label != answer.kind:
            problems.append(f"a {answer.kind} answer labelled {answer.label}")
        if not answer.text.strip():
            problems.append(f"empty {answer.kind} answer")
    if not (question.question.strip() and question.reference_answer.strip()):
        problems.append("no question or reference answer")
    return problems


def load_questions(data_dir: Path = DATA_DIR) -> list[Question]:
    with (data_dir / "questions.jsonl").open(encoding="utf-8") as handle:
        return [parse_question(json.loads(line)) for line in handle if line.strip()]


def load_split(data_dir: Path = DATA_DIR) -> dict[str, list[str]]:
    split: dict[str, list[str]] = json.loads((data_dir / "split.json").read_text(encoding="utf-8"))
    return split


def in_split(questions: list[Question], split: Split, data_dir: Path = DATA_DIR) -> list[Question]:
    """The split's questions, in file order."""
    wanted = set(load_split(data_dir)[split])
    return [q for q in questions if q.id in wanted]
