"""CLI: fit the answers' confidence (core/confidence) on scored evals.qa records of development
questions, cross-validated, and report what it must show, with a risk-coverage curve and a
reliability diagram.

    python -m evals.calibration [--records PATH ...] [--write] [--report PATH]

`--write` stores the calibration fitted on all the records as the embedded defaults' own
(core/confidence/fitted/), which the runtime loads for that chat and embedding model."""

import argparse
import shlex
import sys
from pathlib import Path

from core.confidence.fit import FITTED_NOTE, fit_calibration, fittable
from core.confidence.store import FITTED, save_calibration
from evals.calibration.report import evaluate, write_report
from evals.calibration.samples import grade_samples, qa_samples
from evals.stack import REPO_ROOT

RECORDS = REPO_ROOT / "evals" / "data" / "calibration"
CHAT_MODEL = "embedded/qwen2.5-coder-1.5b-instruct"
EMBEDDING_MODEL = "e5-small-enpt-onnx-int8"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals.calibration", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", type=Path, nargs="*", default=sorted(RECORDS.glob("qa-*.jsonl")),
        help="scored evals.qa records (records.jsonl of its --workdir after a run)",
    )  # fmt: skip
    parser.add_argument(
        "--grading-records", type=Path, nargs="*", default=sorted(RECORDS.glob("grading-*.jsonl")),
        help="evals.grading --records of the dev split",
    )  # fmt: skip
    parser.add_argument(
        "--grading-part", choices=["fit", "report", "all"], default="all",
        help="the half of the grading dev split the grade's calibration is fitted on (evals.grading --part)",
    )  # fmt: skip
    parser.add_argument("--write", action="store_true", help="store the fitted calibration as the default")
    parser.add_argument(
        "--out-dir", type=Path, default=FITTED,
        help="where --write stores it (a held-out check's calibration: evals.grading --calibration)",
    )  # fmt: skip
    parser.add_argument("--chat-model", default=CHAT_MODEL)
    parser.add_argument("--embedding-model", default=EMBEDDING_MODEL)
    parser.add_argument("--report", type=Path, default=REPO_ROOT / "evals" / "reports" / "calibration-dev")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    command = shlex.join(["python", "-m", "evals.calibration", *(argv if argv is not None else sys.argv[1:])])
    samples, asked = qa_samples(args.records)
    part = None if args.grading_part == "all" else args.grading_part
    graded, grades_asked = grade_samples(args.grading_records, part)
    samples, asked = samples + graded, asked | grades_asked
    too_few = sorted({s.kind for s in samples if not fittable([t for t in samples if t.kind == s.kind])})
    if too_few:
        print(f"too few replies (or of one outcome only) to fit: {', '.join(too_few)}; labelled 'medium'")
        samples = [s for s in samples if s.kind not in too_few]
    if not samples:
        calibration = fit_calibration(
            [], chat_model=args.chat_model, embedding_model=args.embedding_model,
            fitted_on="too few development replies to fit any kind",
        )  # fmt: skip
        if args.write:
            print(f"written: {save_calibration(args.out_dir, calibration)}")
        return
    outcome = evaluate(samples, asked)
    names = ", ".join(path.name for path in [*args.records, *args.grading_records])
    calibration = fit_calibration(
        samples,
        chat_model=args.chat_model,
        embedding_model=args.embedding_model,
        fitted_on=f"{len(samples)} development replies ({names}); {FITTED_NOTE}",
        features={kind.kind: kind.kept for kind in outcome.kinds},
    )
    write_report(
        outcome, calibration, args.report, command=command, records=[*args.records, *args.grading_records]
    )
    print(args.report.with_suffix(".md").read_text())
    if args.write:
        print(f"written: {save_calibration(args.out_dir, calibration)}")


if __name__ == "__main__":
    main()
