"""Labelled replies for fitting: evals.qa's scored records (each answered reply's signals, and whether
the model's answer was right), as core/confidence's samples."""

import json
from pathlib import Path

from core.confidence.fit import Sample
from evals.grading.dataset import GRADE


def qa_samples(paths: list[Path]) -> tuple[list[Sample], dict[str, int]]:
    """The samples, and per group how many questions were asked (coverage counts those with no answer
    too). A record without a confidence claimed nothing (not found, declined) and is not a sample."""
    samples: list[Sample] = []
    asked: dict[str, int] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            group = f"{record['dataset']} / {record['kind']}"
            asked[group] = asked.get(group, 0) + 1
            confidence = record.get("confidence")
            if record.get("error") or not confidence or record.get("answer_right") is None:
                continue
            kind = "choice" if record["kind"] == "multiple_choice" else "answer"
            samples.append(
                Sample(
                    f"{path.stem}:{record['case_id']}",
                    group,
                    kind,
                    confidence["signals"],
                    record["answer_right"],
                )
            )
    return samples, asked


def grade_samples(paths: list[Path]) -> tuple[list[Sample], dict[str, int]]:
    """evals.grading records (its --records): each model grade's signals, and whether its verdict
    matched the answer's label (off_topic counts as incorrect). Rule-decided grades are only counted."""
    samples: list[Sample] = []
    asked: dict[str, int] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            group = f"grading / {record['kind']}"
            asked[group] = asked.get(group, 0) + 1
            confidence = record.get("confidence")
            if not confidence:
                continue
            right = GRADE[record["verdict"] or "incorrect"] == GRADE[record["label"]]
            case_id = f"{path.stem}:{record['question_id']}:{record['kind']}"
            samples.append(Sample(case_id, group, "grade", confidence["signals"], right))
    return samples, asked
