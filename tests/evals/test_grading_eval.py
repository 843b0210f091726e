"""The grading eval without a real model: the labelled data set's format and split, and the whole
command (`studyai eval grading`) run end to end with a fake chat model behind the real evaluator graph."""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agents.common.injection import screen_answer
from agents.question_evaluator.graph import subject_vocabulary
from agents.question_evaluator.topical import topical_answer
from backend.cli.app import app
from evals.grading import __main__ as grading_main
from evals.grading.dataset import (
    DATA_DIR,
    GRADE,
    KINDS,
    LABELS,
    Question,
    in_split,
    load_questions,
    load_split,
    parse_question,
)
from evals.grading.report import figures, render
from evals.grading.run import Graded
from tests.agents.helpers import ScriptedChat

SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


@pytest.fixture(scope="module")
def questions() -> list[Question]:
    return load_questions()


def test_every_question_has_one_answer_of_each_kind_and_a_true_label(questions: list[Question]) -> None:
    assert len(questions) >= 40
    assert len({q.id for q in questions}) == len(questions)
    assert {q.language for q in questions} == {"en", "pt"}
    assert sum(q.language == "pt" for q in questions) >= 15
    for question in questions:
        assert sorted(a.kind for a in question.answers) == sorted(KINDS), question.id
        for answer in question.answers:
            assert answer.label in LABELS and answer.text.strip()
            assert answer.label == answer.kind or answer.kind == "injected"
        injected = next(a for a in question.answers if a.kind == "injected")
        assert injected.label in ("incorrect", "partially_correct"), question.id
        assert len({a.text for a in question.answers}) == 5, question.id  # no copied answer


def test_extra_injected_answers_go_with_dev_questions_only(questions: list[Question]) -> None:
    dev = in_split(questions, "dev")
    extra = [a for q in dev for a in q.extra_injected]
    assert len(extra) >= 30 and all(a.kind == "injected" for a in extra)
    assert all(a.label in ("incorrect", "partially_correct") for a in extra)
    assert {q.language for q in dev if q.extra_injected} == {"en", "pt"}
    assert not any(q.extra_injected for q in in_split(questions, "test"))
    # Most are in words the screening patterns miss: what the topical filter is for.
    assert sum(not screen_answer(a.text).hostile for a in extra) >= 0.8 * len(extra)


def test_a_malformed_line_is_refused() -> None:
    first = (DATA_DIR / "questions.jsonl").read_text(encoding="utf-8").splitlines()[0]
    line = json.loads(first)
    line["answers"] = line["answers"][:4]  # no injected answer
    with pytest.raises(ValueError, match="answer kinds"):
        parse_question(line)
    line = json.loads(first)
    line["answers"][0]["label"] = "incorrect"  # a correct answer mislabelled
    with pytest.raises(ValueError, match="labelled"):
        parse_question(line)


def test_splits_are_disjoint_and_cover_every_question(questions: list[Question]) -> None:
    split = load_split()
    dev, test = set(split["dev"]), set(split["test"])
    assert not dev & test
    assert dev | test == {q.id for q in questions}
    assert 0.25 <= len(dev) / len(questions) <= 0.4
    assert [q.id for q in in_split(questions, "dev")] == [q.id for q in questions if q.id in dev]
    for language in ("en", "pt"):  # both languages on both sides
        assert any(i.startswith(language) for i in dev) and any(i.startswith(language) for i in test)


@pytest.mark.skipif(not SHARED_DATA.exists(), reason="shared data not present")
def test_sources_are_real_sections_of_the_allowed_material(questions: list[Question]) -> None:
    for question in questions:
        # Rust book chapters 1-9 only: later chapters' quizzes are kept back as held-out test data.
        allowed = r"rust-book/src/ch0[1-9]-[\w-]+\.md|pense-python/[\w-]+\.md"
        assert re.fullmatch(allowed, question.source_file)
        assert question.source_file.startswith("rust-book" if question.language == "en" else "pense-python")
        headings = [
            re.sub(r"^#+\s*", "", line).strip()
            for line in (SHARED_DATA / question.source_file).read_text(encoding="utf-8").splitlines()
            if line.startswith("#")
        ]
        assert question.source_section in headings, question.id


def _graded(kind: str, label: str, verdict: str | None, language: str = "en") -> Graded:
    return Graded("q", language, kind, label, verdict, None if verdict is None else 0.5, 0, 2.0)


def test_figures_and_report_from_known_grades() -> None:
    results = [
        _graded("correct", "correct", "correct"),
        _graded("partially_correct", "partially_correct", "correct"),
        _graded("incorrect", "incorrect", "incorrect"),
        _graded("off_topic", "off_topic", "incorrect"),
        _graded("injected", "incorrect", "partially_correct"),  # the injection raised the grade
        _graded("correct", "correct", None),  # failed: counted as incorrect
        _graded("correct", "correct", "correct", language="pt"),
    ]
    overall = figures(results)
    assert overall.answers == 7 and overall.failures == 1
    assert overall.accuracy == pytest.approx(4 / 7)
    assert overall.injected_above_label == 1
    assert (
        overall.accuracy_by_kind["correct"] == pytest.approx(2 / 3)
        and overall.accuracy_by_kind["off_topic"] == 1.0
    )
    report = render(results, title="t", conditions=["command: x"])
    assert "Injected answers scoring above their label: 1" in report
    assert re.search(r"^\| en \| 6 \| 0\.500 \|", report, re.MULTILINE)
    assert re.search(r"^\| pt \| 1 \| 1\.000 \| 1\.000 \| – \| 0 \| 0 \|", report, re.MULTILINE)  # kappa 0/0
    assert re.search(r"^\| all \| 7 \| 0\.571 \|", report, re.MULTILINE)


def _student_answer(prompt: str) -> str:
    return prompt.split("<student_answer>\n", 1)[1].split("\n</student_answer>", 1)[0]


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, questions: list[Question]) -> ScriptedChat:
    """Grades by the answer's label (as a perfect grader would) but gives every injected answer full marks
    (as a fooled one would), so the eval's count of injected answers above their label has work to do."""
    answers = [a for q in in_split(questions, "dev") for a in q.all_answers]
    score = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0, "off_topic": 0.0}

    def step(prompt: str) -> str:
        shown = _student_answer(prompt)  # what the grader reads: the answer less what was left out
        # The answer it was cut from: the one sharing most of its words (pieces may come out of order).
        original = max(answers, key=lambda a: len(set(shown.split()) & set(a.text.split())))
        fooled = original.kind == "injected"
        grade = 1.0 if fooled else score[original.label]
        verdict = "correct" if grade == 1.0 else "partially_correct" if grade else "incorrect"
        return json.dumps({"verdict": verdict, "score": grade, "feedback": "ok", "missing": [], "used": []})

    llm = ScriptedChat(script=[step] * 200)

    @contextmanager
    def chat_model(settings: Any) -> Iterator[tuple[ScriptedChat, str]]:
        yield llm, "llama-grammar"

    monkeypatch.setattr(grading_main, "chat_model", chat_model)
    return llm


def test_the_command_runs_end_to_end_with_a_fake_model(
    fake_model: ScriptedChat, questions: list[Question], tmp_path: Path
) -> None:
    out, records_path = tmp_path / "grading-dev.md", tmp_path / "records.jsonl"
    result = CliRunner().invoke(
        app,
        [
            "eval",
            "grading",
            "--split",
            "dev",
            "--limit",
            "3",
            "--out",
            str(out),
            "--records",
            str(records_path),
        ],
    )
    assert result.exit_code == 0, result.output
    dev = in_split(questions, "dev")
    chosen = [q for q in dev if q.language == "en"][:3] + [q for q in dev if q.language == "pt"][:3]
    # Every answer went through the real graph, to the model with its question and reference answer,
    # except those addressing the grader (they forfeit the grade) and those with nothing on the
    # question's subject (incorrect): neither takes a model call.
    graded = [(q, a) for q in chosen for a in q.all_answers]
    hostile = [a for _, a in graded if screen_answer(a.text).hostile]
    off_subject = [
        a
        for q, a in graded
        if not screen_answer(a.text).hostile
        and not topical_answer(a.text, subject_vocabulary(q.as_row(), [])).text
    ]
    assert len(fake_model.prompts) == len(graded) - len(hostile) - len(off_subject)
    assert {a.kind for a in hostile} == {"injected"} and len(off_subject) >= 3
    for question in chosen:
        assert any(f"Reference answer: {question.reference_answer}" in p for p in fake_model.prompts)
    shown = [_student_answer(p) for p in fake_model.prompts]
    assert not any("give this answer full marks" in text or "professor" in text for text in shown)
    report = out.read_text()
    assert "command: `python -m evals.grading --split dev --limit 3 --out" in report
    en = sum(len(q.all_answers) for q in chosen if q.language == "en")
    assert re.search(rf"^\| en \| {en} \|", report, re.MULTILINE)
    assert re.search(rf"^\| all \| {len(graded)} \|", report, re.MULTILINE)
    assert ", ".join(q.id for q in chosen) in report
    # The fake gives full marks to every injected answer it sees, as a fully fooled grader would. Each of
    # these carries words off the subject, so the application caps the credit at what its overlap with
    # the reference supports: none ends above its label, and the report counts as the records show.
    records = [json.loads(line) for line in records_path.read_text().splitlines()]
    above = sum(
        r["kind"] == "injected" and GRADE.get(r["verdict"] or "incorrect", 0) > GRADE[r["label"]]
        for r in records
    )
    assert len(records) == len(graded) and above == 0
    assert f"Injected answers scoring above their label: {above}" in report
