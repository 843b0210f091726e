"""Embeds only the chunk texts whose hash has no stored vector yet, in batches, reporting progress."""

import asyncio
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
from langchain_core.embeddings import Embeddings

Progress = Callable[[int, int], Awaitable[None]]


async def embed_missing(
    embeddings: Embeddings,
    texts_by_hash: dict[str, str],
    known: dict[str, np.ndarray],
    *,
    batch_size: int,
    progress: Progress,
) -> tuple[dict[str, np.ndarray], int]:
    """Returns vectors for every hash (known ones reused) and how many texts were embedded."""
    missing = [digest for digest in texts_by_hash if digest not in known]
    vectors = {digest: known[digest] for digest in texts_by_hash if digest in known}
    await progress(0, len(missing))
    for start in range(0, len(missing), batch_size):
        batch: Sequence[str] = missing[start : start + batch_size]
        # The model is CPU-bound native code; a thread keeps the worker's event loop answering.
        computed = await asyncio.to_thread(embeddings.embed_documents, [texts_by_hash[d] for d in batch])
        for digest, vector in zip(batch, computed, strict=True):
            vectors[digest] = np.asarray(vector, dtype=np.float32)
        await progress(min(start + batch_size, len(missing)), len(missing))
    return vectors, len(missing)
