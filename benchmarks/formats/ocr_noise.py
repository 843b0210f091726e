"""OCR low-confidence check (workers/parsing/ocr.low_confidence): how often noise is flagged, and how
often real text would be.

Noise: seeded Gaussian grey pictures (benchmarks/formats/scans.noise_image) parsed as uploaded page
images are; each ends flagged low confidence, refused as no text, or accepted as text (a miss). Real text:
Think Python's text-layer pages and Pense em Python's Markdown in 2,000-character windows, with the share of
words each signal of the check counts (the largest on any page), and how many pages the check flags.

    .venv/bin/python -m benchmarks.formats.ocr_noise [--seeds 40] [--out benchmarks/reports/ocr_noise.md]
"""

import argparse
from collections import Counter
from dataclasses import fields
from pathlib import Path

import pymupdf

from benchmarks.formats.scans import PENSE_PYTHON, THINK_PYTHON, noise_image
from benchmarks.report import report_path, write_report
from workers.parsing import ParseError, parse_document
from workers.parsing.ocr import LOW_CONFIDENCE, WordSignals, find_tessdata, low_confidence, word_signals

LOW = f"page 1: {LOW_CONFIDENCE}"


def noise_outcome(seed: int) -> str:
    try:
        doc = parse_document(noise_image(seed), source_type="image", filename="noise.png")
    except ParseError:
        return "no text"
    return "low confidence" if LOW in doc.warnings else "accepted as text (miss)"


def real_pages() -> dict[str, list[str]]:
    with pymupdf.open(THINK_PYTHON) as pdf:
        think = [str(page.get_text()) for page in pdf]
    texts = [path.read_text(encoding="utf-8") for path in sorted(PENSE_PYTHON.glob("*.md"))]
    pense = [text[k : k + 2000] for text in texts for k in range(0, len(text), 2000)]
    return {"Think Python text-layer pages": think, "Pense em Python Markdown, 2,000-char windows": pense}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seeds", type=int, default=40)
    parser.add_argument("--out", type=Path, default=report_path("ocr_noise"))
    args = parser.parse_args()
    if find_tessdata("eng+por") is None:
        raise SystemExit(
            "Tesseract's eng and por data are not installed (tesseract-ocr-eng, tesseract-ocr-por)"
        )
    outcomes: Counter[str] = Counter()
    for seed in range(args.seeds):
        outcomes[outcome := noise_outcome(seed)] += 1
        print(f"noise seed {seed:3}: {outcome}", flush=True)
    lines = [
        "# OCR low-confidence check",
        "",
        f"`.venv/bin/python -m benchmarks.formats.ocr_noise --seeds {args.seeds}` — noise pictures 900×600 at"
        " 300 dpi (Gaussian, σ 40, seeds 0 to N−1) parsed as uploaded images; real text as the check sees"
        " it.",
        "",
        "| noise outcome | pictures |",
        "| --- | ---: |",
        *(f"| {name} | {count} |" for name, count in outcomes.most_common()),
        "",
        "| real text | pages judged | flagged | most irregular case | most all capitals | most vowelless"
        " | most all vowels |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, pages in real_pages().items():
        signals = [s for s in map(word_signals, pages) if s is not None]
        flagged = sum(map(low_confidence, pages))
        worst = [max(getattr(s, field.name) for s in signals) for field in fields(WordSignals)]
        lines.append(
            f"| {name} | {len(signals)} | {flagged} | " + " | ".join(f"{w:.1%}" for w in worst) + " |"
        )
    write_report(args.out, "\n".join(lines))
    print("\n".join(lines[-4:]))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
