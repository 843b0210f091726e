"""The two model rerankers: HttpReranker against a real local TEI-style server, CrossEncoderReranker with
a tiny BERT built and saved in tmp_path (nothing is downloaded)."""

import asyncio
import json
import math
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from core.retrieval.rerankers.base import passage_text
from core.retrieval.rerankers.cross_encoder import CrossEncoderReranker
from core.retrieval.rerankers.http import HttpReranker, RerankerError
from core.retrieval.types import Candidate
from tests.http_stubs import send


def candidate(chunk_id: int, text: str, header: str = "") -> Candidate:
    return Candidate(chunk_id=chunk_id, row={"text": text, "context_header": header})


# --- HttpReranker ------------------------------------------------------------------------------------

Reply = Callable[[dict[str, Any]], tuple[int, bytes]]


def tei_reply(body: dict[str, Any]) -> tuple[int, bytes]:
    """What text-embeddings-inference does: one score per text, sorted best first, not in input order.
    The score is the text's length, so the test knows which candidate each score belongs to."""
    results = [{"index": i, "score": float(len(text))} for i, text in enumerate(body["texts"])]
    results.sort(key=lambda item: item["score"], reverse=True)
    return 200, json.dumps(results).encode()


@dataclass
class RerankServer:
    base_url: str
    reply: Reply = tei_reply
    requests: list[dict[str, Any]] = field(default_factory=list)
    answers: list[Any] = field(default_factory=list)


@pytest.fixture
def rerank_server() -> Iterator[RerankServer]:
    state = RerankServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            body = json.loads(raw)
            state.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
            status, payload = state.reply(body)
            state.answers.append(payload)
            send(self, payload, status=status)

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/tei/"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


CANDIDATES = [
    candidate(1, "short"),
    candidate(2, "a much longer passage about leaves", header="Biology > Plants"),
    candidate(3, "medium passage"),
    candidate(4, "the longest passage of them all, by quite a margin"),
]


async def test_http_posts_tei_request_and_maps_scores_back(rerank_server: RerankServer) -> None:
    reranker = HttpReranker(rerank_server.base_url, api_key="s3cret")
    try:
        scores = await reranker.score("what do leaves do?", CANDIDATES)
    finally:
        await reranker.aclose()

    [request] = rerank_server.requests
    assert request["path"] == "/tei/rerank"
    assert request["headers"]["Authorization"] == "Bearer s3cret"
    assert request["body"] == {
        "query": "what do leaves do?",
        "texts": [passage_text(c) for c in CANDIDATES],
        "raw_scores": False,
        "truncate": True,
    }
    assert request["body"]["texts"][1] == "Biology > Plants\n\na much longer passage about leaves"
    # The server answered best first, so not in input order: the reranker must undo that.
    answered = [item["index"] for item in json.loads(rerank_server.answers[0])]
    assert answered != list(range(len(CANDIDATES)))
    assert scores == [float(len(passage_text(c))) for c in CANDIDATES]
    assert all(isinstance(score, float) for score in scores)


async def test_http_sends_no_auth_header_without_key_and_leaves_a_given_client_open(
    rerank_server: RerankServer,
) -> None:
    async with httpx.AsyncClient() as client:
        reranker = HttpReranker(rerank_server.base_url.rstrip("/"), client=client)
        scores = await reranker.score("q", CANDIDATES[:2])
        await reranker.aclose()
        assert not client.is_closed  # the caller's client is the caller's to close
    [request] = rerank_server.requests
    assert request["path"] == "/tei/rerank"
    assert "Authorization" not in request["headers"]
    assert scores == [float(len(passage_text(c))) for c in CANDIDATES[:2]]


async def test_http_makes_no_request_for_zero_candidates(rerank_server: RerankServer) -> None:
    reranker = HttpReranker(rerank_server.base_url)
    try:
        assert await reranker.score("anything", []) == []
    finally:
        await reranker.aclose()
    assert rerank_server.requests == []


def _answer(items: Any, status: int = 200) -> Reply:
    return lambda body: (status, items if isinstance(items, bytes) else json.dumps(items).encode())


@pytest.mark.parametrize(
    ("reply", "status", "reason"),
    [
        (_answer({"error": "model overloaded"}, status=500), 500, 'HTTP 500: {"error": "model overloaded"}'),
        (_answer([{"index": 0, "score": 0.5}]), 200, "1 scores for 2 texts"),
        (_answer([{"index": 0, "score": 0.5}, {"index": 0, "score": 0.4}]), 200, "index 0 appears twice"),
        (_answer([{"index": 0, "score": 0.5}, {"index": 2, "score": 0.4}]), 200, "no valid index"),
        (_answer([{"index": 0, "score": 0.5}, {"index": 1, "score": "high"}]), 200, "no valid score"),
        (_answer({"scores": [0.5, 0.4]}), 200, "not a list"),
        (_answer(b"<html>gateway</html>"), 200, "malformed JSON"),
    ],
    ids=[
        "http-500",
        "wrong-length",
        "duplicate-index",
        "index-out-of-range",
        "bad-score",
        "not-a-list",
        "not-json",
    ],
)
async def test_http_bad_answers_raise_reranker_error(
    rerank_server: RerankServer, reply: Reply, status: int, reason: str
) -> None:
    rerank_server.reply = reply
    reranker = HttpReranker(rerank_server.base_url)
    try:
        with pytest.raises(RerankerError) as caught:
            await reranker.score("q", CANDIDATES[:2])
    finally:
        await reranker.aclose()
    assert caught.value.status == status
    assert str(status) in str(caught.value)
    assert reason in str(caught.value)
    assert len(rerank_server.requests) == 1


async def test_http_transport_failures_raise_reranker_error(rerank_server: RerankServer) -> None:
    def slow(body: dict[str, Any]) -> tuple[int, bytes]:
        time.sleep(1.0)
        return tei_reply(body)

    rerank_server.reply = slow
    reranker = HttpReranker(rerank_server.base_url, timeout=0.2)
    try:
        with pytest.raises(RerankerError, match="failed"):
            await reranker.score("q", CANDIDATES[:1])
    finally:
        await reranker.aclose()

    # A port nobody listens on (bound, then released): connection refused.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    reranker = HttpReranker(f"http://127.0.0.1:{closed_port}")
    try:
        with pytest.raises(RerankerError) as caught:
            await reranker.score("q", CANDIDATES[:1])
    finally:
        await reranker.aclose()
    assert caught.value.status is None


# --- CrossEncoderReranker ----------------------------------------------------------------------------

MARKER = "chlorophyll"
WORDS = (
    "the a of and in is are what do does how why plants plant leaf leaves light sun water green "
    f"{MARKER} energy cell cells carbon oxygen sugar root roots stem soil river mountain history war king "
    "city music song biology plants"
).split()


def build_tiny_model(directory: Path, *, wired: bool) -> tuple[Any, Any]:
    """A 1-layer BERT cross-encoder saved like any Hugging Face model. Random (seeded) unless `wired`:
    then the weights are set by hand so the score rises with the share of MARKER tokens in the pair."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "vocab.txt").write_text("\n".join(vocab) + "\n")
    tokenizer = BertTokenizer(vocab=str(directory / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        num_labels=1,
        initializer_range=0.5,  # the default 0.02 makes every score ~0.5, differing only in the 6th digit
    )
    model = BertForSequenceClassification(config).eval()
    if wired:
        _wire_marker_detector(torch, model, vocab.index("[CLS]"), vocab.index(MARKER))
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return model, tokenizer


def _wire_marker_detector(torch: Any, model: Any, cls_id: int, marker_id: int) -> None:
    """Embeddings: [CLS] -> +-1 on dims 2,3, MARKER -> +-1 on dims 0,1, everything else 0. Zero query/key
    weights make attention a plain mean over the pair, so [CLS] leaves the layer pointing at dims 0,1 in
    proportion to the MARKER share; pooler and classifier then read dim 0. LayerNorms keep scale 1."""
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            parameter.fill_(1.0 if "LayerNorm.weight" in name else 0.0)
        words = model.bert.embeddings.word_embeddings.weight
        words[cls_id, 2], words[cls_id, 3] = 1.0, -1.0
        words[marker_id, 0], words[marker_id, 1] = 1.0, -1.0
        layer = model.bert.encoder.layer[0]
        identity = torch.eye(model.config.hidden_size)
        layer.attention.self.value.weight.copy_(identity)
        layer.attention.output.dense.weight.copy_(identity)
        model.bert.pooler.dense.weight.copy_(identity)
        model.classifier.weight[0, 0] = 4.0


@pytest.fixture(scope="module")
def random_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("cross-encoder-random")
    build_tiny_model(directory, wired=False)
    return directory


PASSAGES = [
    candidate(10, "green leaves use light and water"),
    candidate(11, "the river and the mountain"),
    candidate(12, "history of war and the king", header="History"),
    candidate(13, "roots take water from the soil"),
]


async def test_cross_encoder_scores_match_the_model_run_directly(random_model_dir: Path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    reranker = CrossEncoderReranker(str(random_model_dir), batch_size=2)
    assert reranker.name == "cross-encoder"
    query = "how do plants use light"
    scores = await reranker.score(query, PASSAGES)

    assert len(scores) == len(PASSAGES)
    assert all(isinstance(score, float) and math.isfinite(score) for score in scores)
    assert len({round(score, 6) for score in scores}) == len(PASSAGES)  # different passages, different scores
    assert await reranker.score(query, PASSAGES) == scores  # deterministic
    # Candidate order is respected: reversed input, reversed scores.
    assert await reranker.score(query, PASSAGES[::-1]) == pytest.approx(scores[::-1], abs=1e-6)
    assert await reranker.score(query, []) == []

    # The same saved model through plain transformers: sigmoid of the single logit, header included.
    tokenizer = AutoTokenizer.from_pretrained(random_model_dir)
    model = AutoModelForSequenceClassification.from_pretrained(random_model_dir).eval()
    encoded = tokenizer(
        [query] * len(PASSAGES),
        [passage_text(c) for c in PASSAGES],
        padding=True,
        truncation=True,
        max_length=512,
        return_tensors="pt",
    )
    with torch.no_grad():
        expected = torch.sigmoid(model(**encoded).logits[:, 0]).tolist()
    assert scores == pytest.approx(expected, abs=1e-5)


async def test_cross_encoder_ranking_follows_the_model(tmp_path: Path) -> None:
    build_tiny_model(tmp_path, wired=True)
    reranker = CrossEncoderReranker(str(tmp_path))
    candidates = [
        candidate(1, "the river and the mountain"),
        candidate(2, f"green leaves hold {MARKER} {MARKER} {MARKER}"),
        candidate(3, "water and sun"),
        candidate(4, f"green leaves hold {MARKER}"),
        candidate(5, "roots and soil", header=f"{MARKER} biology"),  # the header is read too
    ]
    scores = await reranker.score("what is green in leaves", candidates)
    ranked = [c.chunk_id for _, c in sorted(zip(scores, candidates, strict=True), key=lambda p: -p[0])]
    assert ranked[:3] == [2, 4, 5] or ranked[:3] == [2, 5, 4]
    assert scores[1] > scores[3] > scores[0]  # three markers beat one, one beats none
    assert scores[4] > scores[2]
    # With no marker anywhere the [CLS] vector carries nothing on dim 0: logit 0, sigmoid 0.5.
    assert scores[0] == pytest.approx(0.5) and scores[2] == pytest.approx(0.5)


async def test_cross_encoder_runs_off_the_event_loop(random_model_dir: Path) -> None:
    reranker = CrossEncoderReranker(str(random_model_dir))
    many = [candidate(i, PASSAGES[i % len(PASSAGES)].text) for i in range(64)]
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    try:
        scores = await reranker.score("light", many)
    finally:
        task.cancel()
    assert len(scores) == 64
    assert ticks > 1  # the loop kept running while the model scored


def test_cross_encoder_without_the_extra_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # makes the import raise ImportError
    with pytest.raises(RuntimeError, match=r'pip install -e "\.\[cross-encoder\]"'):
        CrossEncoderReranker("/nonexistent/model")
