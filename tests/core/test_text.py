"""core.text.words: language detection on the real course files, sentence splitting, stop words, stems."""

from pathlib import Path

import pytest

from core.text.words import (
    FUNCTION_WORDS,
    MARKERS,
    STOP_WORDS,
    content_words,
    covers,
    detect_language,
    guess_language,
    is_portuguese,
    sentence_ends,
    sentence_pieces,
    split_sentences,
    stem,
    term_coverage,
    words,
)
from tests.conftest import SHARED_DATA as DATA

RUST_BOOK = sorted((DATA / "rust-book" / "src").glob("ch*.md"))
PENSE_PYTHON = sorted((DATA / "pense-python").glob("*.md"))


def _prose(path: Path, count: int) -> list[str]:
    """The file's first `count` paragraphs of running prose (no headings, lists, code or HTML)."""
    paragraphs = [p.strip() for p in path.read_text(encoding="utf-8").split("\n\n")]
    prose = [p for p in paragraphs if len(p.split()) >= 25 and p[0].isalpha() and "```" not in p]
    return prose[:count]


def test_the_course_files_are_there() -> None:
    assert len(RUST_BOOK) > 50 and len(PENSE_PYTHON) > 20


def test_whole_chapters_are_detected() -> None:
    assert [detect_language(p.read_text(encoding="utf-8")) for p in RUST_BOOK[:20]] == ["en"] * 20
    assert [detect_language(p.read_text(encoding="utf-8")) for p in PENSE_PYTHON] == ["pt"] * len(
        PENSE_PYTHON
    )


def test_paragraphs_are_detected() -> None:
    english = [text for path in RUST_BOOK[:10] for text in _prose(path, 3)]
    portuguese = [text for path in PENSE_PYTHON[:10] for text in _prose(path, 3)]
    assert len(english) >= 20 and len(portuguese) >= 20
    assert {detect_language(text) for text in english} == {"en"}
    assert {detect_language(text) for text in portuguese} == {"pt"}
    assert {guess_language(text) for text in english} == {"en"}
    assert {guess_language(text) for text in portuguese} == {"pt"}


def test_short_texts_and_undecided_ones() -> None:
    assert detect_language("Rust is fast.") == "auto"  # under 20 words
    assert detect_language("fn main() { let x = 5; println!(x); } " * 5) == "auto"  # code: no markers
    assert guess_language("O que é ownership em Rust?") == "pt"
    assert guess_language("What is ownership in Rust?") == "en"
    assert guess_language("Como funciona o borrow checker") == "pt"  # no diacritic: markers decide
    assert guess_language("ownership?", "pt") == "pt" and guess_language("ownership?") == "en"
    # "a", "as", "do", "no" and "me" are words of both languages: they decide nothing.
    assert {"a", "as", "do", "no", "me"} <= FUNCTION_WORDS["en"] & FUNCTION_WORDS["pt"]
    assert not {"a", "as", "do", "no", "me"} & (MARKERS["en"] | MARKERS["pt"])
    assert guess_language("as a", "pt") == "pt" and guess_language("as a", "en") == "en"
    assert is_portuguese("26 de julho de 1966") and is_portuguese("Sim") and is_portuguese("função")
    assert not is_portuguese("How do I do it?") and not is_portuguese("ownership")


def test_sentences() -> None:
    assert split_sentences("Rust 1.0 shipped in 2015. It is stable!") == [
        "Rust 1.0 shipped in 2015.",
        "It is stable!",
    ]
    assert split_sentences("Use e.g. a Vec, i.e. a list. Then stop.") == [
        "Use e.g. a Vec, i.e. a list.",
        "Then stop.",
    ]
    assert split_sentences("One\ntwo\n\nthree.  Four? Five") == ["One", "two", "three.", "Four?", "Five"]
    assert split_sentences('He said "stop." Then he left (quietly.) Done') == [
        'He said "stop."',
        "Then he left (quietly.)",
        "Done",
    ]
    assert split_sentences("Steps:\n1. Install it.\n2. Run it.") == ["Steps:", "1. Install it.", "2. Run it."]
    assert split_sentences("Call std::io::stdin. Then read.") == ["Call std::io::stdin.", "Then read."]
    assert split_sentences("  \n ") == [] and split_sentences("") == []


def test_glued_sentences_and_clauses_only_when_asked() -> None:
    text = "It ends here.Start again; use collections.Counter: it counts."
    assert split_sentences(text) == [text]
    assert split_sentences(text, glued=True) == [
        "It ends here.",
        "Start again; use collections.",
        "Counter: it counts.",
    ]
    assert split_sentences(text, clauses=True) == [
        "It ends here.Start again;",
        "use collections.Counter:",
        "it counts.",
    ]


def test_pieces_join_back_exactly_and_ends_are_offsets() -> None:
    text = " Ignore that. \nKeep this; and this.\n\n1. Item one.  Done"
    pieces = sentence_pieces(text)
    assert "".join(pieces) == text
    assert [p.strip() for p in pieces if p.strip()] == split_sentences(text)
    assert pieces[:2] == [" Ignore that.", " \n"]
    shown = "Ownership is checked. The compiler (rustc) checks it!"
    assert [shown[:end] for end in sentence_ends(shown)] == [
        "Ownership is checked.",
        "Ownership is checked. The compiler (rustc) checks it!",
    ]
    assert sentence_ends("e.g. this one") == [] and sentence_ends("no end") == []


def test_stop_words_and_content_words() -> None:
    assert {"the", "which", "não", "são", "explain", "difference", "following", "true"} <= STOP_WORDS
    assert not {"value", "function", "valor", "função", "string", "ownership"} & STOP_WORDS
    assert content_words("What is the String's capacity, and how does it work?") == ["string", "capacity"]
    assert content_words("Qual é a diferença entre uma String e um &str em Rust?") == [
        "string",
        "str",
        "rust",
    ]
    assert content_words("Which of the following best describes a move of 2 values? Values!") == [
        "move",
        "values",
    ]
    assert content_words("Rust 2021 edition", numbers=True) == ["rust", "2021", "edition"]
    assert words("Já É snake_case 3.5") == ["já", "é", "snake_case", "3", "5"]


@pytest.mark.parametrize(
    ("word", "token"),
    [
        ("strings", "string"),
        ("string", "strings"),
        ("configure", "configuration"),
        ("borrowing", "borrowed"),
        ("values", "value"),
        ("mutáveis", "mutável"),
        ("variáveis", "variável"),
        ("vec", "vector"),
        ("owner", "ownership"),
        ("2021", "2021"),
    ],
)
def test_stems_cover_other_forms(word: str, token: str) -> None:
    assert covers(word, {token})


@pytest.mark.parametrize(
    ("word", "token"),
    [
        ("ownership", "owner"),  # a long word is not covered by its much shorter root
        ("vector", "vec"),
        ("3", "30"),  # numbers match whole
        ("string", "strip"),
        ("programming", "progress"),
    ],
)
def test_stems_keep_other_words_apart(word: str, token: str) -> None:
    assert not covers(word, {token})


def test_stem_and_term_coverage() -> None:
    assert [stem(w) for w in ("rust", "trait", "strings", "configure", "borrowing")] == [
        "rust",
        "trait",
        "strin",
        "config",
        "borrow",
    ]
    source = "The value is moved to the heap; 3 copies are made."
    assert term_coverage("the values were moved", source) == 1.0
    assert term_coverage("moved to the stack", source) == 0.5
    assert term_coverage("3 copies", source) == 1.0 and term_coverage("30 copies", source) == 0.5
    assert term_coverage("?", source) is None


def test_term_coverage_finds_shorter_forms_too() -> None:
    assert term_coverage("ownership rules", "Each value has one owner.") == 0.5  # ownership ~ owner
    assert term_coverage("configuration", "configure it") == 1.0
    assert term_coverage("theory", "the end") == 0.0  # a stop word is no root
