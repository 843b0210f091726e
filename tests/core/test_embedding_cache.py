"""The on-disk vector cache returns what the model gave, and asks the model only for new texts."""

from pathlib import Path

from langchain_core.embeddings import Embeddings

from core.embeddings.cache import CachedEmbeddings


class CountingEmbeddings(Embeddings):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.seen += texts
        return [[float(len(text)), 1.0, 0.5] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [0.0, 0.0, 1.0]


def test_only_new_texts_reach_the_model(tmp_path: Path) -> None:
    inner = CountingEmbeddings()
    cache = CachedEmbeddings(inner, tmp_path / "cache.sqlite", namespace="m1")
    assert cache.embed_documents(["a", "bb"]) == [[1.0, 1.0, 0.5], [2.0, 1.0, 0.5]]
    assert cache.embed_documents(["bb", "ccc", "a"]) == [[2.0, 1.0, 0.5], [3.0, 1.0, 0.5], [1.0, 1.0, 0.5]]
    assert inner.seen == ["a", "bb", "ccc"]

    reopened = CachedEmbeddings(CountingEmbeddings(), tmp_path / "cache.sqlite", namespace="m1")
    assert reopened.embed_documents(["ccc"]) == [[3.0, 1.0, 0.5]]
    assert reopened.inner.seen == []  # type: ignore[attr-defined]


def test_models_never_share_vectors(tmp_path: Path) -> None:
    CachedEmbeddings(CountingEmbeddings(), tmp_path / "c.sqlite", namespace="m1").embed_documents(["a"])
    other = CountingEmbeddings()
    CachedEmbeddings(other, tmp_path / "c.sqlite", namespace="m2").embed_documents(["a"])
    assert other.seen == ["a"]
