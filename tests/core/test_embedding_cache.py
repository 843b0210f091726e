"""The on-disk vector cache returns what the model gave, and asks the model only for new texts."""

from concurrent.futures import ThreadPoolExecutor
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


def test_concurrent_jobs_share_one_cache(tmp_path: Path) -> None:
    """The worker runs two index jobs at once, each embedding in its own thread through the one cache:
    every call gets its own texts' vectors and none fails (SciFact's 5,183 documents once failed one
    job with sqlite's "cannot commit - no transaction is active")."""
    cache = CachedEmbeddings(CountingEmbeddings(), tmp_path / "cache.sqlite", namespace="m1")

    def job(worker: int) -> None:
        for n in range(150):
            texts = [f"{worker}-{n}-{'x' * k}" for k in range(3)]
            assert cache.embed_documents(texts) == [[float(len(t)), 1.0, 0.5] for t in texts]

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(job, range(6)))  # re-raises the first failure
