"""The QA eval's cases come from the real development files, and its scoring reads replies right."""

from pathlib import Path

import pytest

from evals.qa.datasets import absent_cases, faquad, rust_quizzes
from evals.qa.report import figures, markdown_table
from evals.qa.run import QARecord, corpus_key
from evals.qa.scoring import chosen_option, score_case, token_f1

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def test_rust_cases_are_development_chapters_with_their_chapter_files() -> None:
    dataset = rust_quizzes(DATA)
    assert len(dataset.cases) >= 60
    assert {case.kind for case in dataset.cases} == {"multiple_choice", "short_answer"}
    assert all(name.startswith(("ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09"))
               for name in dataset.corpus.files)  # fmt: skip
    for case in dataset.cases:
        assert case.id.startswith(("ch0",)), case.id  # never a quiz of chapter 10 or later
        assert case.evidence_files and case.evidence_files <= set(dataset.corpus.files)
        if case.kind == "multiple_choice":
            assert case.answers[0] in case.options and len(case.options) >= 2
            assert "A) " in case.question and "Options:" in case.question
    moves = [c for c in dataset.cases if c.id.startswith("ch04-01-ownership-sec2-moves")]
    assert moves and all(c.evidence_files == {"ch04-01-what-is-ownership.md"} for c in moves)
    # Sampling is deterministic for a seed.
    assert [c.id for c in rust_quizzes(DATA, limit=10).cases] == [
        c.id for c in rust_quizzes(DATA, limit=10).cases
    ]


def test_faquad_cases_ask_about_the_articles_they_load() -> None:
    dataset = faquad(DATA, articles=2, limit=10)
    assert len(dataset.cases) == 10 and dataset.corpus.language == "pt"
    text = "\n".join(dataset.corpus.files.values())
    for case in dataset.cases:
        assert case.kind == "extractive" and case.answers
        assert any(gold in text for gold in case.evidence_texts)
    assert all(c.kind == "absent" and not c.answers for c in absent_cases(dataset.corpus))


@pytest.mark.parametrize(
    ("answer", "picked"),
    [
        ("B) Because the value was moved.", 1),
        ("The correct answer is C.", 2),
        ("**A.** It is undefined behavior.", 0),
        ("Option (D) is right.", 3),
        ("It is Freeing the same memory twice, as the book says.", 2),
        ("The answer is a reference to the heap.", None),
    ],
)
def test_the_option_a_reply_picks(answer: str, picked: int | None) -> None:
    options = ["Using a pointer", "Because the value was moved", "Freeing the same memory twice", "None"]
    assert chosen_option(answer, options) == picked


def test_scoring_short_answers_refusals_and_citations() -> None:
    case = faquad(DATA, articles=1, limit=1).cases[0]
    gold = case.answers[0]
    cited = {"cited_files": ["a.md", "a.md"], "cited_texts": [f"... {gold} ...", "outro trecho"]}
    right = score_case(case, answer=f"Segundo o texto, {gold}.", has_answer=True, **cited)
    assert right.correct and right.cited == 2 and right.cited_on_target == 1
    wrong = score_case(case, answer="Nada a ver.", has_answer=True, cited_files=[], cited_texts=[])
    assert not wrong.correct
    refused = score_case(case, answer="Não encontrado.", has_answer=False, cited_files=[], cited_texts=[])
    assert not refused.correct
    absent = absent_cases(faquad(DATA, articles=1, limit=1).corpus)[0]
    assert score_case(
        absent, answer="Não encontrado.", has_answer=False, cited_files=[], cited_texts=[]
    ).correct
    assert token_f1("the ownership rules", "ownership rules") == pytest.approx(1.0)


def test_figures_count_errors_as_wrong_and_report_latency() -> None:
    case = faquad(DATA, articles=1, limit=1).cases[0]
    ok = QARecord("a", "faquad", "extractive", case.question, answer=case.answers[0], has_answer=True,
                  cited_ids=[1], ttft_ms=100.0, total_ms=1000.0)  # fmt: skip
    failed = QARecord("b", "faquad", "extractive", case.question, error="HTTP 502")
    scores = {
        "a": score_case(case, answer=ok.answer, has_answer=True, cited_files=["f"], cited_texts=[ok.answer])
    }
    row = figures("faquad", [ok, failed], scores, hits={"a": True})
    assert row.cases == 2 and row.accuracy == 0.5 and row.errors == 1
    assert row.citation_precision == 1.0 and row.retrieval_hit == 1.0 and row.ttft_p50_ms == 100.0
    assert "| faquad | 2 | 0.500 |" in markdown_table([row])


def test_first_cited_shown_counts_the_cited_answers_that_had_passages_shown() -> None:
    def reply(case_id: str, cited: list[int], shown: list[int] | None) -> QARecord:
        return QARecord(case_id, "faquad", "extractive", "q", answer="x", has_answer=True,
                        cited_ids=cited, shown_ids=shown, total_ms=1.0)  # fmt: skip

    records = [reply("a", [3, 1], [3, 4]), reply("b", [1, 3], [3, 4]), reply("c", [], [3])]
    records.append(reply("d", [3], None))
    case = faquad(DATA, articles=1, limit=1).cases[0]
    score = score_case(case, answer="x", has_answer=True, cited_files=[], cited_texts=[])
    scores = {r.case_id: score for r in records}
    row = figures("faquad", records, scores, hits={})
    # a's first citation was shown, b's second only; c cites nothing and d saw no passages: not counted.
    assert row.first_cited_shown == 0.5
    assert figures("none", [records[2], records[3]], scores, hits={}).first_cited_shown is None


def test_another_sample_of_articles_is_another_project_and_held_out_absent_cases_are_apart() -> None:
    """Samples share file names (faquad-00.md...): reusing a project by name asked one sample's
    questions of another's articles."""
    first, again, other = (faquad(DATA, articles=3, limit=5, seed=s).corpus for s in (7, 7, 8))
    assert set(first.files) == set(other.files)
    assert corpus_key(first) == corpus_key(again) != corpus_key(other)
    dev, held_out = absent_cases(first), absent_cases(first, holdout=True)
    assert not {c.question for c in dev} & {c.question for c in held_out}
    assert all(c.id.startswith("absent-holdout-") for c in held_out)
