"""`studyai calibrate --dev-set` (issue 41): a hosted model (here a fake OpenAI-compatible server) gets a
confidence calibration from the development questions in one command: the three eval runs on their own
embedded services, then the fit stored in the deployment's database, keyed by the model's host and name.
A trial size (--dev-limit) keeps the test short; the command is the same."""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psycopg

from benchmarks.fake_providers import Behaviour, ProviderChatServer
from core.runtime.services import ServiceUrls
from tests.conftest import REPO_ROOT, SHARED_DATA

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def test_a_hosted_model_is_calibrated_on_the_dev_set_in_one_command(
    services: ServiceUrls, db: Conn, tmp_path: Path
) -> None:
    with ProviderChatServer(Behaviour()) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("LLM_", "STUDYAI_"))}
        env |= {
            "DATABASE_URL": services.database_url,
            "STUDYAI_DATA_DIR": str(tmp_path / "data"),
            "LLM_BASE_URL": model.url,
            "LLM_MODEL": "hosted-model",
        }
        command = [sys.executable, "-m", "backend.cli.app", "calibrate", "--dev-set", "--dev-limit", "2",
                   "--data", str(SHARED_DATA)]  # fmt: skip
        done = subprocess.run(command, env=env, cwd=REPO_ROOT, capture_output=True, text=True, timeout=1200)
        asked = len(model.bodies)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "saved to the database" in done.stdout
    assert asked > 0  # the model itself answered the questions
    chat_model = f"{urlsplit(model.url).netloc}/hosted-model"
    try:
        row = await (
            await db.execute(
                "SELECT calibration FROM confidence_calibrations WHERE chat_model = %s", (chat_model,)
            )
        ).fetchone()
        assert row is not None and row["calibration"]["chat_model"] == chat_model
        assert "evals" in row["calibration"]["fitted_on"] or row["calibration"]["fitted_on"]
    finally:
        await db.execute("DELETE FROM confidence_calibrations WHERE chat_model = %s", (chat_model,))
