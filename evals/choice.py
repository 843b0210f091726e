"""Ways to answer a question that carries its options, compared on the development quizzes.

    python -m evals.choice [--methods production,rotations,closed,cloze,verify,reasoned] [--limit N]
                           [--context-chars 2000,1000] [--evidence question,options]

Every single-answer multiple-choice quiz of the Rust book's chapters 1-9, over the same project, the
same retrieval and the same excerpts as the QA graph's choose node (agents/qa/choose.py); only the way
the embedded model picks an option differs (the scorers: evals/choice_scorers.py):

- production: the letters' log-probabilities in the configured orders (QAConfig.choice_orders);
- rotations: the same in every rotation of the options, so each option is shown at every letter;
- closed: rotations without the excerpts (what the model knows alone; not an answer the product may
  give, measured to see what the excerpts add);
- cloze: each option's own text as the answer, its log-likelihood under the model (the reply forced to
  the option's text by a llama.cpp grammar; the server reports the raw log-probabilities);
- verify: each option judged alone as the answer, P(yes) (agents/qa/choice.verify_options);
- both: production's and verify's probabilities multiplied (QAConfig.choice_method "both");
- reasoned: the model first reasons in a few sentences, then the letter's log-probabilities are read in
  the same conversation.

With more than one --context-chars budget, every method is run on the excerpts cut to each budget (the
excerpts' size is most of the choice's time to its first token). With --evidence options, the excerpts
are cut from each option's own best chunks as well as the question's (evidence_chunks). With
--whole-book the project holds every chapter, as a student's would, while the questions stay those of
chapters 1-9. Accuracy and the mean seconds per question are printed as a Markdown table and written to
--report."""

import argparse
import asyncio
import itertools
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from uuid import UUID

from agents.qa import prompts
from agents.qa.config import DEFAULT_CONFIG
from agents.qa.nodes import search_text
from agents.qa.options import Choice, parse_choice
from core.llm.chat import make_chat_model
from core.observability import timing
from core.retrieval import Candidate, Retriever
from core.runtime.services import EmbeddedServices
from core.store.sql.migrations import apply_migrations
from evals.choice_scorers import METHODS, SCORERS
from evals.harness.worker import stop_worker
from evals.qa.datasets import QACase, rust_book, rust_quizzes
from evals.qa.run import load_project
from evals.stack import REPO_ROOT, api_session, liveness_check, start_eval_worker, workdir_settings

EVAL_USER = "qa-evals@studyai.local"


@dataclass(frozen=True)
class Prepared:
    case: QACase
    choice: Choice
    excerpts: dict[tuple[str, int], str]  # by evidence mode and context budget (characters)
    gold: int


async def evidence_chunks(
    retriever: Retriever, project: str, question: str, choice: Choice, modes: list[str]
) -> dict[str, list[Candidate]]:
    """The chunks the excerpts are cut from, per mode: `question`, the choose node's (the best chunks
    for the stem and its options together); `options`, the question's best chunks interleaved with each
    option's own best ones (the stem and that option searched alone), without repeats. The question is
    searched once for both."""
    qa = DEFAULT_CONFIG
    whole = await retriever.search(project_id=UUID(project), query=search_text(question), profile=qa.profile)
    chunks = {"question": whole.results[: qa.answer_chunks]}
    if "options" in modes:
        ranked = [whole.results]
        for option in choice.options:
            query = f"{choice.stem}\n{option}"
            ranked.append(
                (await retriever.search(project_id=UUID(project), query=query, profile=qa.profile)).results
            )
        chunks["options"] = interleaved(ranked, qa.answer_chunks + len(choice.options))
    return {mode: chunks[mode] for mode in modes}


def interleaved(ranked: list[list[Candidate]], limit: int) -> list[Candidate]:
    """The lists' first items, then their second ones, and so on, each chunk once, at most `limit`."""
    chosen: dict[int, Candidate] = {}
    for tier in itertools.zip_longest(*ranked):
        for candidate in tier:
            if candidate is not None and len(chosen) < limit:
                chosen.setdefault(candidate.chunk_id, candidate)
    return list(chosen.values())


async def prepare(
    retriever: Retriever, project: str, cases: list[QACase], args: argparse.Namespace
) -> list[Prepared]:
    prepared: list[Prepared] = []
    qa = DEFAULT_CONFIG
    for case in cases:
        if args.limit and len(prepared) == args.limit:
            break
        choice = parse_choice(case.question)
        if choice is None or case.kind != "multiple_choice":
            continue
        about = f"{choice.stem}\n" + "\n".join(choice.options)
        by_mode = await evidence_chunks(retriever, project, case.question, choice, args.evidence)
        excerpts = {
            (mode, budget): prompts.excerpts_block(chunks, about, budget, qa.chunk_chars)
            for mode, chunks in by_mode.items()
            for budget in args.context_chars
        }
        prepared.append(Prepared(case, choice, excerpts, case.options.index(case.answers[0])))
    return prepared


async def run(args: argparse.Namespace) -> dict[str, tuple[int, int, float]]:
    settings = workdir_settings(args.workdir)
    dataset = rust_quizzes(args.data, chapters=range(1, 10))
    corpus = rust_book(args.data) if args.whole_book else dataset.corpus
    with EmbeddedServices(settings, llm=True) as urls:
        apply_migrations(urls.database_url)
        worker = start_eval_worker(urls, settings)
        try:
            async with api_session(settings, urls, email=EVAL_USER, key_name="choice-evals") as session:
                project = await load_project(
                    session.http, session.headers, corpus, args.workdir / "projects.json",
                    health_check=liveness_check(worker, settings),
                )  # fmt: skip
                prepared = await prepare(session.runtime.retriever, project, dataset.cases, args)
        finally:
            stop_worker(worker)
        llm = make_chat_model(settings, base_url=urls.llm_base_url)
        runs = [
            (method, (mode, budget))
            for mode in args.evidence
            for budget in args.context_chars
            for method in args.methods.split(",")
        ]
        names = {run: run_name(run, args) for run in runs}
        right = dict.fromkeys(names.values(), 0)
        seconds = dict.fromkeys(names.values(), 0.0)
        # Case by case, every method in turn: the methods sharing a prompt prefix reuse the server's cache.
        for number, item in enumerate(prepared, 1):
            outcomes = []
            for method, key in runs:
                name = names[(method, key)]
                started = timing.mark()
                scores = await SCORERS[method](llm, item.excerpts[key], item.choice)
                seconds[name] += timing.elapsed_s(started)
                picked = max(range(len(scores)), key=lambda i: (scores[i], -i)) if scores else -1
                right[name] += picked == item.gold
                outcomes.append(f"{name} {'right' if picked == item.gold else 'wrong'}")
            print(f"[{number}/{len(prepared)}] {item.case.id}: {', '.join(outcomes)}", flush=True)
        count = len(prepared)
        totals = {name: (right[name], count, seconds[name] / max(count, 1)) for name in names.values()}
    return totals


def run_name(run: tuple[str, tuple[str, int]], args: argparse.Namespace) -> str:
    method, (mode, budget) = run
    return "".join(
        [
            method,
            f" @{budget}" if len(args.context_chars) > 1 else "",
            f" [{mode} evidence]" if len(args.evidence) > 1 else "",
        ]
    )


def report(totals: dict[str, tuple[int, int, float]], command: str) -> str:
    lines = [
        "# Answering a question with options: scorers compared (development quizzes)",
        "",
        f"- command: `{command}`",
        "- cases: the single-answer multiple-choice quizzes of the Rust book's chapters 1-9, options in the"
        " eval's shuffled order (evals/qa/datasets.py), excerpts as the choose node builds them",
        "",
        "| method | right | accuracy | mean s per question |",
        "| --- | ---: | ---: | ---: |",
    ]
    for method, (right, count, seconds) in totals.items():
        accuracy = right / count if count else math.nan
        lines.append(f"| {method} | {right}/{count} | {accuracy:.3f} | {seconds:.1f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.choice", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO_ROOT.parent / "shared" / "data")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--limit", type=int, default=0, help="the first N cases only (0 = all)")
    parser.add_argument(
        "--context-chars",
        type=lambda text: [int(part) for part in text.split(",")],
        default=[DEFAULT_CONFIG.choice_context_chars],
        help="excerpt budgets in characters, comma-separated (default: the choose node's)",
    )
    parser.add_argument(
        "--evidence",
        type=lambda text: text.split(","),
        default=["question"],
        help="where the excerpts come from, comma-separated: question (the choose node's), options"
        " (each option searched with the stem too)",
    )
    parser.add_argument(
        "--whole-book",
        action="store_true",
        help="the project holds every chapter of the book, not only chapters 1-9 (the questions stay 1-9's)",
    )
    parser.add_argument("--workdir", type=Path, default=REPO_ROOT / ".cache" / "evals" / "qa")
    parser.add_argument("--report", type=Path, default=REPO_ROOT / "evals" / "reports" / "choice-dev.md")
    args = parser.parse_args(argv)
    unknown = set(args.methods.split(",")) - set(METHODS)
    if unknown:
        parser.error(f"unknown methods: {sorted(unknown)}")
    if set(args.evidence) - {"question", "options"}:
        parser.error(f"unknown evidence: {args.evidence}")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    command = " ".join(["python -m evals.choice", *(sys.argv[1:] if argv is None else argv)])
    text = report(asyncio.run(run(args)), command)
    args.report.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
