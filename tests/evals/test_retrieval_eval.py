"""The retrieval eval: metrics against hand-computed values, the BEIR readers, and the runner's core
(upload through the API, index in the real worker, search with the real Retriever) on a tiny dataset."""

import asyncio
import json
import math
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from uuid import UUID

import httpx
import pytest
from psycopg_pool import AsyncConnectionPool

from core.embeddings.models import make_embeddings
from core.retrieval import Candidate, Retriever
from core.retrieval.rerankers.blend import ScoreBlend
from core.retrieval.rerankers.none import FusedOrder
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.settings.retrieval import RetrievalSettings
from core.store.sql.pool import open_pool
from evals.retrieval.__main__ import write_chart
from evals.retrieval.beir import BeirDataset, BeirDocument, load_dataset, load_qrels
from evals.retrieval.bm25_reference import bm25_reference
from evals.retrieval.ingest import corpus_id_of, create_project, filename_for, load_corpus
from evals.retrieval.metrics import evaluate_ranking, mean_metrics, mrr_at, ndcg_at, recall_at
from evals.retrieval.run import (
    BLEND,
    DENSE,
    HYBRID,
    LEXICAL,
    blend_label,
    chunk_corpus_ids,
    corpus_ranking,
    evaluate_queries,
    markdown_report,
)
from tests.conftest import UserFactory

# --- metrics -------------------------------------------------------------------------------------


def test_ndcg_uses_grades_as_gains_and_log2_discount() -> None:
    qrels = {"a": 2, "b": 1, "c": 0}
    # DCG = 1/log2(2) + 0 + 2/log2(4) = 2; ideal = 2/log2(2) + 1/log2(3)
    expected = 2 / (2 + 1 / math.log2(3))
    assert ndcg_at(["b", "x", "a"], qrels, 10) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], qrels, 10) == pytest.approx(1.0)
    assert ndcg_at(["b", "a"], qrels, 10) == pytest.approx((1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3)))
    assert ndcg_at(["x", "c"], qrels, 10) == 0.0  # grade 0 is judged, not relevant
    # The cut-off applies to the ranking and to the ideal list alike.
    assert ndcg_at(["x", "a"], qrels, 1) == 0.0
    assert ndcg_at(["a", "x"], qrels, 1) == pytest.approx(1.0)


def test_recall_counts_relevant_retrieved_over_all_relevant() -> None:
    qrels = {"a": 1, "b": 1, "c": 1, "z": 0}
    ranking = ["a", "x", "b", "z", "c"]
    assert recall_at(ranking, qrels, 1) == pytest.approx(1 / 3)
    assert recall_at(ranking, qrels, 3) == pytest.approx(2 / 3)
    assert recall_at(ranking, qrels, 100) == pytest.approx(1.0)
    assert recall_at([], qrels, 10) == 0.0


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_within_k() -> None:
    qrels = {"a": 1, "b": 2}
    assert mrr_at(["x", "y", "b", "a"], qrels, 10) == pytest.approx(1 / 3)
    assert mrr_at(["a"], qrels, 10) == 1.0
    assert mrr_at([f"x{i}" for i in range(10)] + ["a"], qrels, 10) == 0.0  # rank 11 is outside @10


def test_a_repeated_id_counts_once_at_its_first_position() -> None:
    qrels = {"a": 1, "b": 1}
    assert evaluate_ranking(["a", "a", "b"], qrels) == evaluate_ranking(["a", "b"], qrels)
    assert recall_at(["a"] * 10 + ["b"], qrels, 10) == 1.0  # duplicates take no slot


def test_mean_is_a_macro_average() -> None:
    perfect = evaluate_ranking(["a"], {"a": 1})
    missed = evaluate_ranking(["x"], {"a": 1})
    mean = mean_metrics([perfect, missed])
    assert mean.ndcg_10 == pytest.approx(0.5) and mean.recall_100 == pytest.approx(0.5)
    assert mean.as_dict() == {"ndcg@10": 0.5, "recall@10": 0.5, "recall@100": 0.5, "mrr@10": 0.5}


def test_corpus_ranking_puts_a_document_where_its_best_chunk_ranks() -> None:
    corpus_of = {1: "d1", 2: "d2", 3: "d1", 4: "d3"}
    chunks = [Candidate(chunk_id=i) for i in (3, 2, 1, 99, 4)]  # 99: not a corpus chunk, skipped
    assert corpus_ranking(chunks, corpus_of) == ["d1", "d2", "d3"]
    assert corpus_ranking(chunks, corpus_of, depth=2) == ["d1", "d2"]


# --- BEIR readers --------------------------------------------------------------------------------


def write_beir(folder: Path, docs: dict[str, tuple[str, str]], queries: dict[str, str], qrels: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_id": i, "title": title, "text": text}) for i, (title, text) in docs.items()]
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "queries.test.jsonl").write_text(
        "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in queries.items())
    )
    (folder / "qrels.test.tsv").write_text("query-id\tcorpus-id\tscore\n" + qrels)
    return folder


def test_beir_loaders_read_corpus_queries_and_graded_qrels(tmp_path: Path) -> None:
    folder = write_beir(
        tmp_path / "tiny",
        {"10": ("A title", "Some text."), "MED-2": ("", "Untitled text.")},
        {"1": "first question", "2": "unjudged question", "3": "only judged irrelevant"},
        "1\t10\t2\n1\tMED-2\t1\n3\t10\t0\n",
    )
    dataset = load_dataset(folder, queries="queries.test.jsonl", qrels="qrels.test.tsv")
    assert dataset.name == "tiny"
    assert list(dataset.corpus) == ["10", "MED-2"]
    assert dataset.corpus["10"] == BeirDocument("10", "A title", "Some text.")
    assert dataset.queries["2"] == "unjudged question"
    assert dataset.qrels == {"1": {"10": 2, "MED-2": 1}, "3": {"10": 0}}
    assert dataset.judged_queries() == {"1": "first question"}


def test_qrels_without_the_beir_header_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "qrels.tsv"
    path.write_text("1\t10\t1\n")
    with pytest.raises(ValueError, match="header"):
        load_qrels(path)


def test_file_names_carry_any_corpus_id_back() -> None:
    for corpus_id in ("4983", "MED-10", "a/b c%"):
        assert corpus_id_of(filename_for(corpus_id)) == corpus_id


# --- end to end on the real stack ----------------------------------------------------------------

TINY_CORPUS = {
    "volcano": (
        "Volcanoes",
        "Basaltic lava erupts from shield volcanoes, forming gentle slopes of cooled magma.",
    ),
    "plants": (
        "Photosynthesis",
        "Chloroplasts in green leaves turn sunlight, water and carbon dioxide into glucose.",
    ),
    "castle": (
        "Medieval castles",
        "Stone keeps, moats and drawbridges defended castles against siege engines.",
    ),
    "jazz": (
        "Jazz music",
        "Saxophone improvisation and syncopated swing rhythms define bebop from New Orleans.",
    ),
    "space": (
        "Black holes",
        "Event horizons of black holes trap light; Hawking radiation slowly evaporates them.",
    ),
    "bread": (
        "Sourdough bread",
        "A wild yeast starter ferments the flour dough, giving loaves a tangy crumb.",
    ),
}
TINY_QUERIES = {
    "q-jazz": "saxophone improvisation bebop",  # every word only in the jazz document
    "q-castle": "drawbridges moats",  # only in the castle document, judged with grade 2
    "q-wrong": "sourdough starter",  # judged against the volcano document: every system must miss
}
TINY_QRELS = "q-jazz\tjazz\t1\nq-castle\tcastle\t2\nq-wrong\tvolcano\t1\n"


@pytest.fixture(scope="module")
async def pool(services: ServiceUrls) -> AsyncIterator[AsyncConnectionPool]:
    pool = await open_pool(services.database_url, max_size=2)
    yield pool
    await pool.close()


async def test_runner_core_loads_through_the_api_and_scores_every_system(
    client: httpx.AsyncClient,
    make_user: UserFactory,
    worker: subprocess.Popen[bytes],
    pool: AsyncConnectionPool,
    settings: Settings,
    tmp_path: Path,
) -> None:
    folder = write_beir(tmp_path / "tiny-e2e", TINY_CORPUS, TINY_QUERIES, TINY_QRELS)
    dataset = load_dataset(folder, queries="queries.test.jsonl", qrels="qrels.test.tsv")
    headers = await make_user("evals")
    project_id = await create_project(client, headers, "evals: tiny")
    saved: list[dict[str, str]] = []
    loaded = await load_corpus(
        client, headers, project_id, dataset.corpus, save=saved.append, poll_seconds=0.2, timeout=300
    )
    assert loaded.uploaded == 6 and set(loaded.documents) == set(TINY_CORPUS) and saved == [loaded.documents]
    documents = (await client.get(f"/projects/{project_id}/documents", headers=headers)).json()
    assert {d["title"] for d in documents} == {title for title, _ in TINY_CORPUS.values()}
    assert {d["source_type"] for d in documents} == {"text"}

    again = await load_corpus(client, headers, project_id, dataset.corpus, poll_seconds=0.2, timeout=60)
    assert again.uploaded == 0 and again.documents == loaded.documents  # a rerun reuses the project

    corpus_of = await chunk_corpus_ids(pool, project_id=UUID(project_id), documents=loaded.documents)
    assert sorted(corpus_of.values()) == sorted(TINY_CORPUS)  # short documents: one chunk each
    embeddings = await asyncio.to_thread(make_embeddings, settings)
    progress: list[tuple[int, int]] = []
    retriever = Retriever(
        pool, embeddings, FusedOrder(), RetrievalSettings(candidate_depth=100, rerank_depth=100)
    )
    results = await evaluate_queries(
        retriever,
        project_id=UUID(project_id),
        queries=dataset.judged_queries(),
        qrels=dataset.qrels,
        corpus_of=corpus_of,
        rerankers=[(BLEND, ScoreBlend(0.5))],
        blend_weights=[0.3, 0.5],
        progress_seconds=0,
        on_progress=lambda done, partial: progress.append((done, len(partial))),
    )
    assert progress == [(1, 6), (2, 6), (3, 6)]
    by_name = {result.name: result for result in results}
    assert list(by_name) == [LEXICAL, DENSE, HYBRID, BLEND, blend_label(0.3), blend_label(0.5)]
    for name in (LEXICAL, HYBRID):
        for query_id in ("q-jazz", "q-castle"):
            assert by_name[name].per_query[query_id].ndcg_10 == pytest.approx(1.0), (name, query_id)
    for result in results:
        assert result.per_query["q-wrong"].recall_100 <= (0.0 if result.name == LEXICAL else 1.0)
        assert len(result.latencies_ms) == 3 and result.mean_latency_ms > 0
    assert by_name[LEXICAL].per_query["q-wrong"].ndcg_10 == 0.0  # BM25 finds only the bread document
    assert by_name[LEXICAL].metrics.ndcg_10 == pytest.approx(2 / 3)
    # The sweep rescoring at the configured weight reproduces a real blend search exactly.
    assert by_name[blend_label(0.5)].per_query == by_name[BLEND].per_query

    report = markdown_report(results, {"dataset": "tiny-e2e", "queries": "3"})
    assert f"| {LEXICAL} | 0.6667 |" in report and report.count("\n| ") == len(results) + 2
    write_chart(results, tmp_path / "chart.png", "tiny")
    assert (tmp_path / "chart.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_bm25_reference_is_computed_on_the_dataset() -> None:
    corpus = {
        "d1": BeirDocument("d1", "Ownership", "Each value in Rust has an owner that drops it."),
        "d2": BeirDocument("d2", "Borrowing", "References borrow a value without taking ownership of it."),
        "d3": BeirDocument("d3", "Cooking", "Boil the pasta for ten minutes in salted water."),
    }
    dataset = BeirDataset(
        "tiny",
        corpus,
        {"q1": "who drops a value owner", "q2": "boiling pasta"},
        {"q1": {"d1": 1}, "q2": {"d3": 1}},
    )
    assert bm25_reference(dataset) == pytest.approx(1.0)
    missing = BeirDataset("tiny", corpus, {"q1": "boiling pasta"}, {"q1": {"d1": 1}})
    assert bm25_reference(missing) < 1.0
