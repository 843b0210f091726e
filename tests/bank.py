"""Question-bank items for tests that store them straight into the database, without the generator."""

import random
from typing import Any
from uuid import UUID

import numpy as np
from fastapi import FastAPI

from core.store.study import questions


def unit_vector(seed: int | None = None) -> np.ndarray:
    """A random 384-dimension embedding of length 1 (a fresh seed each call unless one is given)."""
    rng = np.random.default_rng(random.randrange(1 << 30) if seed is None else seed)
    vector = np.asarray(rng.normal(size=384), dtype=np.float32)
    return vector / np.linalg.norm(vector)


def draft(question: str, answer: str, embedding: np.ndarray, **fields: Any) -> questions.NewQuestion:
    """An item as the generator would store it: an active, confident, fully supported short answer
    without a document, citing chunk 1; `fields` change any of that."""
    item: dict[str, Any] = {
        "document_id": None,
        "section_path": [],
        "type": "short_answer",
        "distractors": [],
        "explanation": "The source says so.",
        "difficulty": "easy",
        "confidence": 0.9,
        "model_confidence": 0.9,
        "support": 1.0,
        "status": "active",
        "source_chunk_ids": [1],
    }
    return questions.NewQuestion(question=question, answer=answer, embedding=embedding, **{**item, **fields})


async def store(
    app: FastAPI,
    project_id: UUID | str,
    user_id: UUID,
    item: questions.NewQuestion,
    *,
    duplicate_similarity: float = 0.99,
    review_state: str | None = None,
    flag: str | None = None,
) -> questions.Question:
    """The item stored by the user through the app's pool (its connections know the vector type), near
    no other; with a review_state, the teacher's curation of it (and its flag) set directly."""
    async with app.state.runtime.pool.connection() as conn:
        row = await questions.insert_question(
            conn,
            project_id=project_id,  # type: ignore[arg-type]  # psycopg adapts either
            user_id=user_id,
            duplicate_similarity=duplicate_similarity,
            question=item,
        )
        assert row is not None
        if review_state is not None:
            await conn.execute(
                "UPDATE questions SET review_state = %s, flag = %s WHERE id = %s",
                (review_state, flag, row.id),
            )
    return row
