"""OCR character error rate on scans whose text is known (workers/parsing/ocr.py).

Pages of Think Python (English; the text layer is the truth) and a page set from Pense em Python's prose
(Portuguese, accents included) are rendered to pictures, as clean scans (300 dpi PNG) and degraded ones
(200 dpi, rotated 1.5 degrees, JPEG quality 60), wrapped into PDF pages without a text layer and parsed
as uploads are. CER = edit distance / truth length, after collapsing whitespace on both sides.

    .venv/bin/python -m benchmarks.formats.ocr_cer [--out benchmarks/reports/ocr_cer.md]
"""

import argparse
import time
from pathlib import Path

import pymupdf

from benchmarks.formats.scans import THINK_PYTHON, portuguese_prose, scanned_pdf, text_page_pdf
from benchmarks.report import report_path, write_report
from workers.parsing import parse_document
from workers.parsing.ocr import OCR_DPI, find_tessdata
from workers.parsing.pdf import TEXT_FLAGS

ENGLISH_PAGES = (20, 40, 60, 99)  # 0-based: chapter openings and a page of code and prose
PORTUGUESE_CHAPTERS = ("03-funcoes.md", "08-strings.md")
CONDITIONS = {
    "clean (300 dpi PNG)": {"dpi": 300},
    "degraded (200 dpi, 1.5°, JPEG 60)": {"dpi": 200, "rotate": 1.5, "jpeg_quality": 60},
}
TARGET = 0.03


def edit_distance(a: str, b: str) -> int:
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # not a dependency: the plain dynamic programme, one row at a time
        previous = list(range(len(b) + 1))
        for i, char_a in enumerate(a, start=1):
            current = [i]
            for j, char_b in enumerate(b, start=1):
                current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b)))
            previous = current
        return previous[-1]
    return int(Levenshtein.distance(a, b))


def cer(recognised: str, truth: str) -> float:
    recognised, truth = " ".join(recognised.split()), " ".join(truth.split())
    return edit_distance(recognised, truth) / max(len(truth), 1)


def samples() -> list[tuple[str, bytes, int]]:
    """(name, source PDF, page) of each page to scan."""
    book = THINK_PYTHON.read_bytes()
    pages = [(f"en: Think Python p. {number + 1}", book, number) for number in ENGLISH_PAGES]
    pages += [(f"pt: Pense em Python {chapter}", text_page_pdf(portuguese_prose(chapter)), 0)
              for chapter in PORTUGUESE_CHAPTERS]  # fmt: skip
    return pages


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=report_path("ocr_cer"))
    args = parser.parse_args()
    if find_tessdata("eng+por") is None:
        raise SystemExit(
            "Tesseract's eng and por data are not installed (tesseract-ocr-eng, tesseract-ocr-por)"
        )
    rows: list[tuple[str, str, float, float, int]] = []
    for condition, how in CONDITIONS.items():
        for name, source, page in samples():
            with pymupdf.open(stream=source) as pdf:
                truth = pdf.load_page(page).get_text(flags=TEXT_FLAGS)
            scan = scanned_pdf(source, [page], **how)
            started = time.perf_counter()
            doc = parse_document(scan, source_type="pdf", filename="scan.pdf")
            seconds = time.perf_counter() - started
            rate = cer(doc.text, truth)
            rows.append((condition, name, rate, seconds, len(" ".join(truth.split()))))
            print(f"{condition:36} {name:36} CER {rate:6.2%}  {seconds:5.1f} s", flush=True)
    lines = [
        "# OCR character error rate",
        "",
        "`.venv/bin/python -m benchmarks.formats.ocr_cer` — pages rendered, wrapped into PDF pages without "
        f"a text layer, parsed as uploads are (OCR at {OCR_DPI} dpi, eng+por). CER = edit distance / truth "
        "length after collapsing whitespace; seconds = the whole parse of the one-page file (OCR most of "
        "it). "
        f"Target: CER ≤ {TARGET:.0%}.",
        "",
        "| condition | page | chars | CER | s/page |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    lines += [f"| {c} | {n} | {chars} | {rate:.2%} | {s:.1f} |" for c, n, rate, s, chars in rows]
    lines += ["", "| condition | CER (all chars) | mean s/page |", "| --- | ---: | ---: |"]
    for condition in CONDITIONS:
        mine = [row for row in rows if row[0] == condition]
        overall = sum(row[2] * row[4] for row in mine) / sum(row[4] for row in mine)
        mean_s = sum(row[3] for row in mine) / len(mine)
        lines.append(f"| {condition} | {overall:.2%} | {mean_s:.1f} |")
        print(f"{condition:36} overall CER {overall:.2%}, {mean_s:.1f} s per page")
    write_report(args.out, "\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
