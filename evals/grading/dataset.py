"""The labelled grading set (evals/data/grading/README.md): questions, their five answers, the split."""

import json
from dataclasses import dataclass, replace
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
    # More injected answers written after the test split was scored (injections-<split>.jsonl), to
    # develop defences that do not depend on the wording the first five answers used.
    extra_injected: tuple[Answer, ...] = ()

    @property
    def all_answers(self) -> tuple[Answer, ...]:
        return self.answers + self.extra_injected

    def as_row(self) -> dict[str, Any]:
        """The shape of a stored question row (core/store/study/questions.py) that the evaluator reads. No
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


def load_extra_injections(split: Split, data_dir: Path = DATA_DIR) -> dict[str, list[Answer]]:
    """The split's extra injected answers by question id; none where the split has no such file."""
    path = data_dir / f"injections-{split}.jsonl"
    extra: dict[str, list[Answer]] = {}
    if not path.exists():
        return extra
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["label"] not in LABELS or not row["text"].strip():
                raise ValueError(f"{path.name}: {row['question']}: label {row['label']!r} or empty text")
            extra.setdefault(row["question"], []).append(Answer("injected", row["label"], row["text"]))
    return extra


Part = Literal["fit", "report"]


def dev_part(question_id: str, data_dir: Path = DATA_DIR) -> Part:
    """The dev split in two halves, alternating in file order within each language: a calibration
    fitted on "fit" only (`python -m evals.calibration --grading-part fit --out-dir DIR --write`) is
    measured on questions it never saw by `python -m evals.grading --part report --calibration FILE`."""
    mine = [q for q in load_split(data_dir)["dev"] if q.split("-")[0] == question_id.split("-")[0]]
    if question_id not in mine:
        raise ValueError(f"{question_id} is not in the dev split")
    return "fit" if mine.index(question_id) % 2 == 0 else "report"


def in_split(questions: list[Question], split: Split, data_dir: Path = DATA_DIR) -> list[Question]:
    """The split's questions, in file order, with the split's extra injected answers."""
    wanted = set(load_split(data_dir)[split])
    extra = load_extra_injections(split, data_dir)
    unknown = set(extra) - wanted
    if unknown:
        raise ValueError(f"extra injections for questions outside the {split} split: {sorted(unknown)}")
    return [replace(q, extra_injected=tuple(extra.get(q.id, ()))) for q in questions if q.id in wanted]
