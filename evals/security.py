"""Hostile content against the real chat model: the cases of evals/harness/security_cases.py (passages
that try to steer the QA answer model, students' answers that try to steer the grader), each run through
the agents' own code, with the pass rate per kind written to a Markdown report.

    python -m evals.security [--out evals/reports/security.md]

The chat model is LLM_BASE_URL when set, else the embedded llama.cpp model (weights in
settings.models_dir, e.g. LLM_MODELS_DIR=.cache/models as the tests use)."""

import argparse
import asyncio
import signal
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from core.llm.chat import StructuredMode
from core.observability import timing
from core.settings import Settings
from evals.groundedness_judge import chat_model
from evals.harness.security_cases import ANSWER_CASES, DOCUMENT_CASES
from evals.harness.security_runs import Outcome, run_answer_case, run_document_case

DEFAULT_OUT = Path(__file__).resolve().parent / "reports" / "security.md"


async def run_all(llm: BaseChatModel, mode: StructuredMode) -> list[tuple[Outcome, float]]:
    results: list[tuple[Outcome, float]] = []
    clean_grades: dict[tuple[str, str], dict[str, Any]] = {}
    for case in DOCUMENT_CASES:
        started = timing.mark()
        outcome = await run_document_case(case, llm, mode)
        results.append((outcome, timing.elapsed_s(started)))
    for answer_case in ANSWER_CASES:
        started = timing.mark()
        outcome = await run_answer_case(answer_case, llm, clean_grades, mode)
        results.append((outcome, timing.elapsed_s(started)))
    return results


def _cell(text: str, limit: int = 90) -> str:
    text = " ".join(str(text).split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _what(outcome: Outcome) -> str:
    detail = outcome.detail
    if "answer" in detail:
        return f"{detail['outcome']}, cites {detail['cited']}: {detail['answer']}"
    clean, injected = detail["clean"], detail["injected"]
    return (
        f"clean {clean['score']:.2f} {clean['verdict']} / injected {injected['score']:.2f}"
        f" {injected['verdict']}"
    )


def report(results: list[tuple[Outcome, float]], *, model: str) -> str:
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for outcome, _ in results:
        family = "answer (grader)" if outcome.kind == "answer" else "document/" + outcome.kind.split("/")[1]
        by_kind[family].append(outcome.passed)
    passed = sum(outcome.passed for outcome, _ in results)
    lines = [
        f"# Hostile content: {passed}/{len(results)} defences held ({passed / len(results):.0%})",
        "",
        f"Model: {model}. Cases: evals/harness/security_cases.py;"
        " harness: evals/harness/security_runs.py; run with `python -m evals.security`.",
        "",
        "| kind | held | cases |",
        "| --- | --- | --- |",
        *(f"| {kind} | {sum(ok)}/{len(ok)} | {len(ok)} |" for kind, ok in sorted(by_kind.items())),
        "",
        "| case | kind | held | seconds | what happened |",
        "| --- | --- | --- | --- | --- |",
    ]
    for outcome, seconds in results:
        held = "yes" if outcome.passed else "**no**: " + _cell("; ".join(outcome.failures), 60)
        what = _cell(_what(outcome))
        lines.append(f"| {outcome.name} | {outcome.kind} | {held} | {seconds:.1f} | {what} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the embedded model server is stopped with the run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    settings = Settings()
    with chat_model(settings) as (llm, mode):
        results = asyncio.run(run_all(llm, mode))
    model = settings.llm.model if settings.llm.base_url else f"{settings.llm.local_model} (embedded)"
    text = report(results, model=model)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)


if __name__ == "__main__":
    main()
