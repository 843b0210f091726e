"""Measures the groundedness judge on SciFact claims whose evidence is known.

Each case is an "answer" (a SciFact claim) judged against "chunks" (evidence sentences):
- supported: a claim with SUPPORT evidence, judged against its evidence sentences;
- contradicted: a claim with CONTRADICT evidence, judged against its evidence sentences;
- unrelated: a claim judged against another claim's evidence sentences from a document it does not
  cite, the most word-overlapping such evidence (same topic where the corpus has one, so the judge
  cannot pass by noticing a change of subject).
Half the cases are supported, a quarter each contradicted and unrelated. The answer-level verdict is
"grounded" when groundedness >= --grounded-from (default 1.0: every claim supported, what a reader of
a RAG answer needs); the figures are accuracy, recall on the not-supported cases and latency per case.

Claims are split into dev (id % 5 == 0, for prompt work) and test (the rest, for the reported figure).

    python -m evals.groundedness_judge [--split test] [--n 120] [--seed 0] [--out report.md]

The chat model is LLM_BASE_URL when set, else the embedded llama.cpp model (weights in
settings.models_dir, e.g. LLM_MODELS_DIR=.cache/models as the tests use)."""

import argparse
import asyncio
import csv
import json
import random
import re
import signal
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from langchain_core.language_models import BaseChatModel

from agents.groundedness import ContrastCheck, JudgeChunk, Judgement, judge_answer
from core.embeddings.models import make_embeddings
from core.llm.chat import StructuredMode, make_chat_model
from core.llm.structured import StructuredOutputError
from core.observability import timing
from core.runtime import ChatModelPlan
from core.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data" / "scifact"

Kind = Literal["supported", "contradicted", "unrelated"]
Judge = Callable[["Case"], Awaitable[Judgement]]


@dataclass(frozen=True)
class Case:
    claim_id: str
    kind: Kind
    answer: str
    chunks: tuple[JudgeChunk, ...]

    @property
    def supported(self) -> bool:
        return self.kind == "supported"

    @property
    def question(self) -> str:
        return f"Is this true? {self.answer}"


@dataclass(frozen=True)
class Outcome:
    case: Case
    grounded: bool | None  # None: the judge failed (counted as wrong)
    groundedness: float | None
    latency_s: float


@dataclass(frozen=True)
class Evidence:
    claim_id: str
    claim: str
    label: str  # SUPPORT or CONTRADICT
    cited: frozenset[str]
    sentences: dict[str, tuple[str, ...]]  # evidence document -> its evidence sentences


# The BEIR corpus joins an abstract's sentences with nothing between them, or with runs of spaces
# (and a newline) before a structured abstract's section: split there, as the evidence indices count.
# Not core.text.words's prose splitter: a ". " inside an abstract ("et al. ", "vs. ") is no break here, and
# splitting there would point 263 of 957 evidence rows at the wrong sentence.
_SENTENCE_BREAK = re.compile(r"\s{2,}|(?<=[.?!])(?=[A-Z])|(?<=[.?!][\"')\]])(?=[A-Z])")


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]


def load_evidence(data_dir: Path) -> list[Evidence]:
    """One entry per claim whose evidence rows agree on a label and whose sentence indices resolve."""
    abstracts: dict[str, list[str]] = {}
    with (data_dir / "corpus.jsonl").open() as handle:
        for line in handle:
            doc = json.loads(line)
            abstracts[doc["_id"]] = split_sentences(doc["text"])
    rows: dict[str, list[dict[str, str]]] = {}
    with (data_dir / "claims.train.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["evidence_label"]:
                rows.setdefault(row["id"], []).append(row)
    evidence: list[Evidence] = []
    for claim_id, claim_rows in rows.items():
        labels = {row["evidence_label"] for row in claim_rows}
        sentences: dict[str, tuple[str, ...]] = {}
        for row in claim_rows:
            indices = [int(i) for i in row["evidence_sentences"].strip("[]").split()]
            abstract = abstracts.get(row["evidence_doc_id"], [])
            if indices and max(indices) < len(abstract):
                sentences[row["evidence_doc_id"]] = tuple(abstract[i] for i in indices)
        if len(labels) == 1 and len(sentences) == len({r["evidence_doc_id"] for r in claim_rows}):
            cited = frozenset(re.findall(r"\d+", claim_rows[0]["cited_doc_ids"])) | set(sentences)
            evidence.append(Evidence(claim_id, claim_rows[0]["claim"], labels.pop(), cited, sentences))
    return evidence


def _chunks(sentences: dict[str, tuple[str, ...]]) -> tuple[JudgeChunk, ...]:
    return tuple(JudgeChunk(i, " ".join(s)) for i, s in enumerate(sentences.values(), start=1))


_WORD = re.compile(r"[a-z0-9]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))


def _nearest(claim: str, others: Sequence[Evidence], vocabulary: dict[str, set[str]]) -> Evidence:
    """The evidence sharing most words with the claim, normalised so long evidence does not win by
    length alone."""
    words = _words(claim)

    def nearness(other: Evidence) -> tuple[float, str]:
        size = max(len(vocabulary[other.claim_id]), 1)
        return len(words & vocabulary[other.claim_id]) / size**0.5, other.claim_id

    return max(others, key=nearness)


def in_split(evidence: Sequence[Evidence], split: Literal["dev", "test"]) -> list[Evidence]:
    return [e for e in evidence if (int(e.claim_id) % 5 == 0) == (split == "dev")]


def build_cases(
    evidence: Sequence[Evidence], *, n: int, seed: int, split: Literal["dev", "test"] = "test"
) -> list[Case]:
    """Deterministic for a seed: n // 2 supported, the rest shared by contradicted and unrelated."""
    claims = in_split(evidence, split)
    rng = random.Random(seed)
    support = sorted((e for e in claims if e.label == "SUPPORT"), key=lambda e: int(e.claim_id))
    contradict = sorted((e for e in claims if e.label == "CONTRADICT"), key=lambda e: int(e.claim_id))
    rng.shuffle(support)
    rng.shuffle(contradict)
    n_supported, n_contradicted = n // 2, (n - n // 2 + 1) // 2
    n_unrelated = n - n_supported - n_contradicted
    cases = [Case(e.claim_id, "supported", e.claim, _chunks(e.sentences)) for e in support[:n_supported]]
    cases += [
        Case(e.claim_id, "contradicted", e.claim, _chunks(e.sentences)) for e in contradict[:n_contradicted]
    ]
    # Unrelated: claims not used above, each against the nearest other claim's evidence it does not cite.
    pool = support[n_supported:] + contradict[n_contradicted:]
    rng.shuffle(pool)
    vocabulary = {o.claim_id: _words(" ".join(" ".join(s) for s in o.sentences.values())) for o in evidence}
    for e in pool[:n_unrelated]:
        others = [o for o in evidence if o.claim_id != e.claim_id and not (set(o.sentences) & e.cited)]
        nearest = _nearest(e.claim, others, vocabulary)
        cases.append(Case(e.claim_id, "unrelated", e.claim, _chunks(nearest.sentences)))
    if len(cases) < n:
        raise ValueError(f"only {len(cases)} cases in the {split} split for n={n}")
    return cases


@dataclass(frozen=True)
class Scores:
    cases: int
    accuracy: float
    recall_unsupported: float  # not-supported cases the judge did not call grounded
    accuracy_by_kind: dict[str, float]
    failures: int  # the judge raised (malformed twice, timeout): counted as wrong
    mean_latency_s: float


def score(outcomes: Sequence[Outcome]) -> Scores:
    def correct(o: Outcome) -> bool:
        return o.grounded is not None and o.grounded == o.case.supported

    def share(subset: Sequence[Outcome]) -> float:
        return sum(correct(o) for o in subset) / len(subset) if subset else float("nan")

    unsupported = [o for o in outcomes if not o.case.supported]
    kinds: tuple[Kind, ...] = ("supported", "contradicted", "unrelated")
    return Scores(
        cases=len(outcomes),
        accuracy=share(outcomes),
        recall_unsupported=share(unsupported),
        accuracy_by_kind={k: share([o for o in outcomes if o.case.kind == k]) for k in kinds},
        failures=sum(o.grounded is None for o in outcomes),
        mean_latency_s=sum(o.latency_s for o in outcomes) / max(len(outcomes), 1),
    )


async def run_cases(cases: Sequence[Case], judge: Judge, *, grounded_from: float) -> list[Outcome]:
    """One case at a time: the local model serves one request at a time, so latency stays per case."""
    outcomes = []
    for number, case in enumerate(cases, start=1):
        started = timing.mark()
        judgement = None
        try:
            judgement = await judge(case)
            grounded, groundedness = judgement.groundedness >= grounded_from, judgement.groundedness
        except (StructuredOutputError, TimeoutError) as error:
            print(f"  case {case.claim_id}: judge failed: {str(error)[:120]}", flush=True)
            grounded = groundedness = None
        outcome = Outcome(case, grounded, groundedness, timing.elapsed_s(started))
        outcomes.append(outcome)
        mark = "ok " if grounded is not None and grounded == case.supported else "ERR"
        line = f"{number:4d} {mark} {case.kind:12s} g={groundedness} {outcome.latency_s:5.1f}s"
        print(f"{line} {case.answer[:70]}", flush=True)
        if judgement is not None and mark == "ERR":  # what the judge said, for prompt work
            for claim in judgement.claims:
                print(f"       supported={claim.supported} chunks={claim.chunk_ids} {claim.claim[:70]}")
    return outcomes


def report(scores: Scores, *, title: str) -> str:
    rows = [
        ("cases", f"{scores.cases}"),
        ("accuracy (grounded vs not)", f"{scores.accuracy:.3f}"),
        ("recall on not supported", f"{scores.recall_unsupported:.3f}"),
        *((f"accuracy, {kind}", f"{value:.3f}") for kind, value in scores.accuracy_by_kind.items()),
        ("judge failures", f"{scores.failures}"),
        ("mean latency per case", f"{scores.mean_latency_s:.1f} s"),
    ]
    table = [f"| {name} | {value} |" for name, value in rows]
    return "\n".join([f"## {title}", "", "| metric | value |", "| --- | --- |", *table, ""])


@contextmanager
def chat_model(settings: Settings) -> Iterator[tuple[BaseChatModel, StructuredMode]]:
    """LLM_BASE_URL when set; otherwise the embedded model, started for the run like `studyai up` does."""
    if settings.llm.base_url:
        plan = ChatModelPlan.for_url(settings, settings.llm.base_url)
        yield make_chat_model(settings), plan.structured_mode
        return
    from core.llm.local import LOCAL_MODELS, LlamaServer, assemble

    path = assemble(LOCAL_MODELS[settings.llm.local_model], settings.models_dir)
    log_path = settings.services.data_dir / "logs" / "llm-server-judge-eval.log"
    with LlamaServer(
        path, context_tokens=settings.llm.context_tokens, threads=settings.llm.threads, log_path=log_path
    ) as server:
        plan = ChatModelPlan.for_url(settings, server.base_url)
        yield make_chat_model(settings, base_url=server.base_url), plan.structured_mode


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--split", choices=["dev", "test"], default="test")
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grounded-from", type=float, default=1.0)
    parser.add_argument("--out", type=Path, help="also write the table as Markdown here")
    args = parser.parse_args(argv)

    # SIGTERM unwinds like Ctrl-C, so the embedded model server is stopped with the run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    settings = Settings()
    cases = build_cases(load_evidence(args.data), n=args.n, seed=args.seed, split=args.split)
    embeddings = make_embeddings(settings)  # the judge's closeness test, as in the worker
    with chat_model(settings) as (llm, mode):

        async def judge(case: Case) -> Judgement:
            return await judge_answer(
                llm,
                question=case.question,
                answer=case.answer,
                chunks=case.chunks,
                mode=mode,
                embeddings=embeddings,
                contrast=ContrastCheck(llm) if settings.groundedness.contrast_check else None,
            )

        outcomes = asyncio.run(run_cases(cases, judge, grounded_from=args.grounded_from))
    model = settings.llm.model if settings.llm.base_url else f"{settings.llm.local_model} (embedded)"
    title = (
        f"Groundedness judge, SciFact train {args.split}, n={args.n}, seed={args.seed}, {model},"
        f" grounded when groundedness >= {args.grounded_from},"
        f" contrast check {'on' if settings.groundedness.contrast_check else 'off'}"
    )
    table = report(score(outcomes), title=title)
    print(table)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(table)


if __name__ == "__main__":
    main()
