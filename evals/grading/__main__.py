"""CLI: the Question Evaluator on the labelled grading set (evals/data/grading), one split.

    python -m evals.grading [--split dev|test] [--limit N] [--language en|pt] [--out PATH]

Each answer is graded by the real evaluator graph (agents/question_evaluator) with the chat model at
LLM_BASE_URL when set, else the embedded llama.cpp model (weights in settings.models_dir, e.g.
LLM_MODELS_DIR=.cache/models). Tune on dev; run test once, on the final design."""

import argparse
import asyncio
import json
import shlex
import signal
import sys
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path

from agents.question_evaluator.config import EvaluatorConfig
from core.confidence import Calibration, calibration_for, chat_model_key
from core.observability import timing
from core.settings import Settings
from evals.grading.dataset import dev_part, in_split, load_questions
from evals.grading.report import render
from evals.grading.run import grade_all
from evals.groundedness_judge import chat_model
from evals.stack import REPO_ROOT


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.grading", description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument(
        "--limit", type=int, default=0, help="the first N questions of each language in the split (0 = all)"
    )
    parser.add_argument("--language", choices=["en", "pt"], help="only this language's questions")
    parser.add_argument(
        "--part", choices=["fit", "report"],
        help="half of the dev split (dataset.py); the held-out check fits on 'fit', reports on 'report'",
    )  # fmt: skip
    parser.add_argument(
        "--calibration", type=Path,
        help="a calibration file (evals.calibration --write --out-dir) instead of the shipped one",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, help="default evals/reports/grading-<split>.md")
    parser.add_argument("--kinds", default="", help="only these kinds of answer, e.g. injected")
    parser.add_argument("--records", type=Path, help="also write one JSON line per graded answer here")
    parser.add_argument(
        "--contrast-margin",
        type=float,
        help="switch the grader's contrast check on with this margin (EvaluatorConfig.contrast_margin)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the embedded model server is stopped with the run.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    questions = in_split(load_questions(), args.split)
    if args.part:
        if args.split != "dev":
            sys.exit("--part divides the dev split only")
        questions = [q for q in questions if dev_part(q.id) == args.part]
    if args.language:
        questions = [q for q in questions if q.language == args.language]
    if args.limit:  # a short run still sees both languages
        by_language = [[q for q in questions if q.language == language] for language in ("en", "pt")]
        questions = [q for group in by_language for q in group[: args.limit]]
    settings = Settings()
    started = timing.mark()
    with chat_model(settings) as (llm, mode):
        kinds = set(args.kinds.split(",")) if args.kinds else None
        config = EvaluatorConfig(contrast_margin=args.contrast_margin)
        # The embedded model's fitted calibration (core/confidence/fitted/), so the report shows labels.
        calibration = (
            Calibration.from_dict(
                json.loads(args.calibration.read_text()) | {"source": str(args.calibration)}
            )
            if args.calibration
            else calibration_for(chat_model_key(settings), settings.embeddings.model)
        )
        results = asyncio.run(
            grade_all(questions, llm, mode, kinds=kinds, config=config, confidence=calibration)
        )
    elapsed = timing.elapsed_s(started)
    embedded = f"{settings.llm.local_model} (embedded, llama.cpp)"
    model = settings.llm.model if settings.llm.base_url else embedded
    command = "python -m evals.grading " + shlex.join(argv if argv is not None else sys.argv[1:])
    report = render(
        results,
        title=f"Grading quality: Question Evaluator, {args.split} split",
        conditions=[
            f"command: `{command.strip()}`",
            f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; run time {elapsed / 60:.1f} min",
            f"chat model: {model}",
            f"questions: {len(questions)} ({', '.join(q.id for q in questions)}), 5 answers each"
            f" and {sum(len(q.extra_injected) for q in questions)} extra injected answers"
            f" (evals/data/grading/injections-{args.split}.jsonl where it exists)",
            f"answers graded: {len(results)}" + (f" (kinds: {args.kinds})" if args.kinds else ""),
            "grader input: question, reference answer and student answer; no excerpts (no document)",
        ],
    )
    print(report)
    if args.records:
        args.records.write_text("".join(json.dumps(asdict(r), ensure_ascii=False) + "\n" for r in results))
    out = args.out or REPO_ROOT / "evals" / "reports" / f"grading-{args.split}.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report, encoding="utf-8")
    print(f"report: {out}")


if __name__ == "__main__":
    main()
