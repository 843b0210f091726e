"""LangSmith tracing against a local HTTP server that records what the real langsmith client sends:
the graph's run (with the run id the caller chose) and the groundedness feedback on it."""

import gzip
import io
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import default as email_policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypedDict

import pytest
import zstandard
from langgraph.graph import END, START, StateGraph

from agents.groundedness import ClaimVerdict, Judgement
from core.observability.tracing import Tracing
from core.settings import Settings
from tests.http_stubs import send

PROJECT_ID = str(uuid.uuid4())
# What a current LangSmith answers on /info: multipart ingestion with zstd compression.
INFO = {
    "version": "0.12.0",
    "instance_flags": {"zstd_compression_enabled": True},
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
        "scale_up_nthreads_limit": 16,
        "scale_up_qsize_trigger": 1000,
        "scale_down_nempty_trigger": 4,
    },
}


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes  # decompressed
    parts: dict[str, Any] = field(default_factory=dict)  # multipart: part name -> parsed JSON (or bytes)

    def json(self) -> Any:
        return json.loads(self.body)


def _decode(body: bytes, encoding: str) -> bytes:
    if encoding == "zstd":
        reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True)
        return reader.read()
    return gzip.decompress(body) if encoding == "gzip" else body


def _parts(body: bytes, content_type: str) -> dict[str, Any]:
    message = BytesParser(policy=email_policy).parsebytes(
        b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + body
    )
    parts: dict[str, Any] = {}
    for part in message.iter_parts():
        payload = part.get_payload(decode=True) or b""
        try:
            parts[part.get_param("name", header="content-disposition")] = json.loads(payload)
        except ValueError:
            parts[part.get_param("name", header="content-disposition")] = payload
    return parts


class LangSmithStub(BaseHTTPRequestHandler):
    requests: list[Recorded]  # set on the subclass per server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while size := int(self.rfile.readline().strip() or b"0", 16):
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(chunks)
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        body = _decode(self._body(), self.headers.get("Content-Encoding", ""))
        content_type = self.headers.get("Content-Type", "")
        record = Recorded(self.command, self.path.split("?")[0], dict(self.headers), body)
        if content_type.startswith("multipart/"):
            record.parts = _parts(body, content_type)
        self.requests.append(record)
        reply: Any = {}
        if record.path == "/info":
            reply = INFO
        elif record.method == "GET" and record.path == "/sessions":
            project = {"id": PROJECT_ID, "name": "studyai-test", "tenant_id": str(uuid.uuid4())}
            reply = [{**project, "reference_dataset_id": None}]
        send(self, json.dumps(reply).encode())

    do_GET = do_POST = do_PATCH = do_PUT = _handle  # http.server's naming


@pytest.fixture
def langsmith_stub() -> Iterator[tuple[str, list[Recorded]]]:
    recorded: list[Recorded] = []
    handler = type("Handler", (LangSmithStub,), {"requests": recorded})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", recorded
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def no_langsmith_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the developer's shell has, only the settings may turn tracing on."""
    for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY"):
        monkeypatch.delenv(name, raising=False)


class State(TypedDict):
    question: str
    answer: str


def tiny_graph() -> Any:
    def answer(state: State) -> dict[str, str]:
        return {"answer": f"echo: {state['question']}"}

    builder = StateGraph(State)
    builder.add_node(answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="tiny_qa")


JUDGEMENT = Judgement(
    claims=[
        ClaimVerdict(claim="Each value has one owner.", supported=True, chunk_ids=[11]),
        ClaimVerdict(claim="Rust has a garbage collector.", supported=False, chunk_ids=[]),
    ],
    groundedness=0.5,
    relevance=0.9,
    hallucination_risk=0.5,
    flagged=False,
)


def settings_for(endpoint: str, key: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None, LANGSMITH_API_KEY=key, LANGSMITH_ENDPOINT=endpoint, LANGSMITH_PROJECT="studyai-test"
    )


def runs_sent(recorded: list[Recorded]) -> list[dict[str, Any]]:
    """Every run create/update the client sent, whichever endpoint it chose."""
    runs: list[dict[str, Any]] = []
    for request in recorded:
        for name, part in request.parts.items():
            if name.count(".") == 1 and name.split(".")[0] in ("post", "patch") and isinstance(part, dict):
                runs.append({"op": name.split(".")[0], "id": name.split(".")[1], **part})
        if request.path == "/runs/batch":
            batch = request.json()
            runs += [{"op": op, **run} for op in ("post", "patch") for run in batch.get(op) or []]
        elif request.path == "/runs" and request.method == "POST":
            runs.append({"op": "post", **request.json()})
    return runs


def feedback_sent(recorded: list[Recorded]) -> list[dict[str, Any]]:
    feedback: list[dict[str, Any]] = []
    for request in recorded:
        feedback += [p for n, p in request.parts.items() if n.startswith("feedback.") and isinstance(p, dict)]
        if request.path == "/feedback" and request.method == "POST":
            feedback.append(request.json())
    return feedback


async def test_runs_are_traced_and_feedback_attached(langsmith_stub: tuple[str, list[Recorded]]) -> None:
    endpoint, recorded = langsmith_stub
    tracing = Tracing.from_settings(settings_for(endpoint, "lsv2-test-key"))
    assert tracing is not None
    run_id = uuid.uuid4()

    result = await tiny_graph().ainvoke(
        {"question": "Who owns a value?"}, config={"run_id": run_id, "callbacks": tracing.callbacks()}
    )
    assert result["answer"] == "echo: Who owns a value?"
    tracing.record_feedback(run_id, JUDGEMENT)
    tracing.record_score(run_id, "correctness", 1.0, comment="ch04-01#2")  # the evals runner's scores
    tracing.flush()

    assert all(r.headers.get("x-api-key") == "lsv2-test-key" for r in recorded if r.path != "/info")
    runs = runs_sent(recorded)
    root = [r for r in runs if str(r.get("id")) == str(run_id)]
    # The client sent the runs zstd-compressed to /runs/multipart, as it does to LangSmith itself.
    assert any(r.path == "/runs/multipart" and r.headers.get("Content-Encoding") == "zstd" for r in recorded)
    assert root, f"no run {run_id} among {[(r.method, r.path, list(r.parts)) for r in recorded]}"
    created = next(r for r in root if r["op"] == "post")
    assert created["name"] == "tiny_qa" and created["session_name"] == "studyai-test"
    # The graph's node is traced as a child of the same trace.
    assert any(r.get("name") == "answer" and str(r.get("trace_id")) == str(run_id) for r in runs)

    feedback = {f["key"]: f for f in feedback_sent(recorded)}
    assert set(feedback) == {"groundedness", "hallucination_risk", "relevance", "correctness"}
    assert feedback["correctness"]["run_id"] == str(run_id) and feedback["correctness"]["score"] == 1.0
    grounded = feedback["groundedness"]
    assert grounded["run_id"] == str(run_id) and grounded["trace_id"] == str(run_id)
    assert grounded["score"] == 0.5
    assert grounded["session_id"] == PROJECT_ID
    assert "1/2 claims supported" in grounded["comment"] and "garbage collector" in grounded["comment"]
    assert feedback["hallucination_risk"]["score"] == 0.5
    assert feedback["relevance"]["score"] == 0.9


async def test_without_a_key_nothing_is_sent(langsmith_stub: tuple[str, list[Recorded]]) -> None:
    endpoint, recorded = langsmith_stub
    assert Tracing.from_settings(settings_for(endpoint, "")) is None
    await tiny_graph().ainvoke({"question": "Who owns a value?"}, config={"run_id": uuid.uuid4()})
    assert recorded == []


def test_the_key_is_read_from_langsmith_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGSMITH_API_KEY", "lsv2-from-env")
    monkeypatch.setenv("LANGSMITH_PROJECT", "course-x")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert (
        settings.tracing.langsmith_api_key == "lsv2-from-env"
        and settings.tracing.langsmith_project == "course-x"
    )
