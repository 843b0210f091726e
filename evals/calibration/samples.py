"""Labelled replies for fitting: evals.qa's scored records (each answered reply's signals, and whether
the model's answer was right), as core/confidence's samples."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.confidence.fit import Sample
from evals.grading.dataset import GRADE, Part, dev_part

Record = dict[str, Any]


def _read_samples(
    paths: list[Path],
    group_of: Callable[[Record], str],
    sample_of: Callable[[str, str, Record], Sample | None],
    keep: Callable[[Record], bool] = lambda record: True,
) -> tuple[list[Sample], dict[str, int]]:
    """Every record of the JSON-lines files counted as asked in its group; `sample_of(file stem, group,
    record)` makes its sample, or None where it is not one."""
    samples: list[Sample] = []
    asked: dict[str, int] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if not keep(record):
                continue
            group = group_of(record)
            asked[group] = asked.get(group, 0) + 1
            sample = sample_of(path.stem, group, record)
            if sample is not None:
                samples.append(sample)
    return samples, asked


def qa_samples(paths: list[Path]) -> tuple[list[Sample], dict[str, int]]:
    """The samples, and per group how many questions were asked (coverage counts those with no answer
    too). A record without a confidence claimed nothing (not found, declined) and is not a sample."""

    def sample(stem: str, group: str, record: Record) -> Sample | None:
        confidence = record.get("confidence")
        if record.get("error") or not confidence or record.get("answer_right") is None:
            return None
        kind = "choice" if record["kind"] == "multiple_choice" else "answer"
        case_id = f"{stem}:{record['case_id']}"
        return Sample(case_id, group, kind, confidence["signals"], record["answer_right"])

    return _read_samples(paths, lambda record: f"{record['dataset']} / {record['kind']}", sample)


def grade_samples(paths: list[Path], part: Part | None = None) -> tuple[list[Sample], dict[str, int]]:
    """evals.grading records (its --records): each model grade's signals, and whether its verdict
    matched the answer's label (off_topic counts as incorrect). Rule-decided grades are only counted.
    With `part`, only the dev split's questions of that half (evals/grading/dataset.py dev_part)."""

    def sample(stem: str, group: str, record: Record) -> Sample | None:
        confidence = record.get("confidence")
        if not confidence:
            return None
        right = GRADE[record["verdict"] or "incorrect"] == GRADE[record["label"]]
        case_id = f"{stem}:{record['question_id']}:{record['kind']}"
        return Sample(case_id, group, "grade", confidence["signals"], right)

    def wanted(record: Record) -> bool:
        return part is None or dev_part(record["question_id"]) == part

    return _read_samples(paths, lambda record: f"grading / {record['kind']}", sample, wanted)
