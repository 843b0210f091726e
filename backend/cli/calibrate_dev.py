"""`studyai calibrate --dev-set`: the confidence of answers and grades fitted for the chat model this server
is configured with (LLM_BASE_URL, LLM_MODEL, LLM_API_KEY), on the development questions the embedded
model's calibration was fitted on: the Rust book's chapter 1-9 quizzes, a FaQuAD sample, questions
nothing answers, and the dev split of the grading set. The same three runs as for the embedded model
(`python -m evals.qa`, `python -m evals.grading`, `python -m evals.calibration`, each with its own
embedded Postgres and Redis, every confidence signal recorded), then the fit is stored in the database,
where every API and worker process reads it: a school's hosted model is labelled on day one, without 30
approved items of its own. The eval suites are run by module name: the backend does not import them."""

import importlib.util
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from core.confidence import Calibration, chat_model_key
from core.settings import Settings


def default_data_dir() -> Path:
    """Where the development data is read from: `../shared/data` beside the repository, as the evals do."""
    spec = importlib.util.find_spec("evals")
    if spec is None or spec.origin is None:
        raise FileNotFoundError("the evals package is not installed: run from the repository")
    return Path(spec.origin).resolve().parents[2] / "shared" / "data"


def dev_set_steps(settings: Settings, data: Path, workdir: Path, *, limit: int = 0) -> list[list[str]]:
    """The three eval runs (`limit`: a few questions of each, to try the command quickly)."""
    qa = ["-m", "evals.qa", "--data", str(data), "--workdir", str(workdir / "qa"),
          "--report", str(workdir / "qa-report")]  # fmt: skip
    grading = ["-m", "evals.grading", "--split", "dev", "--records", str(workdir / "grading.jsonl"),
               "--out", str(workdir / "grading.md")]  # fmt: skip
    if limit:
        qa += ["--rust-limit", str(limit), "--faquad-limit", str(limit), "--faquad-articles", "1"]
        qa += ["--no-absent"]
        grading += ["--limit", str(limit)]
    fit = [
        "-m", "evals.calibration", "--records", str(workdir / "qa" / "records.jsonl"),
        "--grading-records", str(workdir / "grading.jsonl"),
        "--chat-model", chat_model_key(settings), "--embedding-model", settings.embeddings.model,
        "--write", "--out-dir", str(workdir / "fit"), "--report", str(workdir / "calibration"),
    ]  # fmt: skip
    return [qa, grading, fit]


def dev_set_calibration(
    settings: Settings, data: Path, workdir: Path, *, limit: int = 0, echo: Callable[[str], None] = print
) -> Calibration:
    """Runs the steps (every signal recorded: QA_ALL_SIGNALS) and reads the fitted calibration."""
    # Each eval runs on embedded services of its own, never on the deployment's database.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env["QA_ALL_SIGNALS"] = "true"
    for step in dev_set_steps(settings, data, workdir, limit=limit):
        echo(f"running python {' '.join(step[:2])} ...")
        subprocess.run([sys.executable, *step], env=env, check=True)
    [fitted] = sorted((workdir / "fit").glob("confidence-*.json"))
    return Calibration.from_dict(json.loads(fitted.read_text()))
