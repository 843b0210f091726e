"""The Question Evaluator graph with a scripted fake chat model, on a real project (Postgres, chunks
indexed by the real worker, real retrieval): every branch."""

import asyncio
import json
import re
import subprocess
from collections.abc import AsyncIterator
from typing import Any

import httpx
import numpy as np
import psycopg
import pytest
from langchain_core.language_models import BaseChatModel

from agents.common.context import AgentContext
from agents.question_evaluator.graph import graph
from core.db import open_pool
from core.embeddings import make_embeddings
from core.retrieval import RetrievalConfig, Retriever
from core.retrieval.rerankers.factory import make_reranker
from core.services import ServiceUrls
from core.settings import Settings
from core.store import questions
from core.structured import StructuredOutputError
from tests.agents.test_question_generator import Project, ScriptedChat, course_project
from tests.conftest import UserFactory


@pytest.fixture(scope="module")
async def project(
    client: httpx.AsyncClient,
    make_user: UserFactory,
    worker: subprocess.Popen[bytes],
    db: psycopg.AsyncConnection[dict[str, Any]],
) -> Project:
    return await course_project(client, make_user, db, "evaluator")


@pytest.fixture(scope="module")
async def retriever(settings: Settings, services: ServiceUrls) -> AsyncIterator[Retriever]:
    pool = await open_pool(services.database_url, max_size=4)
    embeddings = await asyncio.to_thread(make_embeddings, settings)
    yield Retriever(pool, embeddings, make_reranker(settings), RetrievalConfig.from_settings(settings))
    await pool.close()


async def store(
    retriever: Retriever,
    project: Project,
    *,
    question: str,
    answer: str,
    document: str | None = "ownership.md",
    distractors: tuple[str, ...] = (),
) -> dict[str, Any]:
    document_id = project.documents[document] if document else None
    sources = [
        i for i, row in project.chunks.items() if row["document_id"] == project.documents["ownership.md"]
    ]
    draft = questions.NewQuestion(
        document_id=document_id,
        section_path=[],
        type="multiple_choice" if distractors else "short_answer",
        question=question,
        answer=answer,
        distractors=list(distractors),
        explanation="The source says so.",
        difficulty="easy",
        confidence=0.9,
        model_confidence=0.9,
        support=1.0,
        status="active",
        source_chunk_ids=sources[:1],
        embedding=np.asarray(retriever.embeddings.embed_query(question), dtype=np.float32),
    )
    async with retriever.pool.connection() as conn:
        await conn.execute("DELETE FROM questions WHERE project_id = %s", (project.id,))
        row = await questions.insert_question(
            conn, project_id=project.id, user_id=project.user_id, question=draft, duplicate_similarity=0.92
        )
    assert row is not None
    return row


def context(project: Project, retriever: Retriever, llm: BaseChatModel, language: str = "en") -> AgentContext:
    return AgentContext(
        project_id=project.id,
        retriever=retriever,
        llm=llm,
        structured_mode="llama-grammar",
        language=language,
        user_id=project.user_id,
    )


def excerpt_ids(prompt: str) -> list[int]:
    return [int(i) for i in re.findall(r"^\[(\d+)\] ", prompt, re.MULTILINE)]


def grade(score: float, verdict: str = "correct", used: list[int] | None = None, **extra: Any) -> Any:
    def step(prompt: str) -> str:
        ids = excerpt_ids(prompt)
        return json.dumps(
            {
                "verdict": verdict,
                "score": score,
                "feedback": "Good: you said the value is moved.",
                "missing": extra.get("missing", []),
                "used": used if used is not None else ids[:1],
            }
        )

    return step


MOVE_QUESTION = "What happens to the first variable after a String is assigned to another variable?"
MOVE_ANSWER = "The value is moved, so the first variable can no longer be used."


async def test_model_grades_against_chunks_of_the_questions_own_document(
    project: Project, retriever: Retriever
) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER)
    llm = ScriptedChat(script=[lambda p: grade(0.9, used=[excerpt_ids(p)[0], 987654321])(p)])
    ctx = context(project, retriever, llm)
    out = await graph.ainvoke(
        {"question": question, "answer": "The value is moved and the first variable is invalid."}, context=ctx
    )
    [prompt] = llm.prompts
    shown = excerpt_ids(prompt)
    assert 1 <= len(shown) <= 5
    assert all(project.chunks[i]["document_id"] == project.documents["ownership.md"] for i in shown)
    assert (
        f"Reference answer: {MOVE_ANSWER}" in prompt
        and "Student answer:\n<student_answer>\nThe value is moved and the first" in prompt
    )
    assert out["score"] == 0.9 and out["verdict"] == "correct" and out["graded_by"] == "model"
    assert [c.chunk_id for c in out["citations"]] == [shown[0]]
    assert out["citations"][0].document_id == str(project.documents["ownership.md"])
    assert out["invented_ids"] == [987654321]
    assert {"retrieve", "grade"} <= ctx.timings_ms.keys()


@pytest.mark.parametrize(
    ("score", "verdict", "expected_score", "expected_verdict"),
    [
        (1.2, "correct", 1.0, "correct"),  # a small overshoot is clamped
        (-0.2, "partially_correct", 0.0, "incorrect"),
        (0.9, "incorrect", 0.9, "correct"),  # the verdict follows the score
        (0.5, "correct", 0.5, "partially_correct"),
        (40, "incorrect", 0.4, "partially_correct"),  # "40" read as 40 %
        (0.1, "correct", 0.1, "incorrect"),
    ],
)
async def test_score_is_clamped_and_the_verdict_follows_it(
    project: Project,
    retriever: Retriever,
    score: float,
    verdict: str,
    expected_score: float,
    expected_verdict: str,
) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER)
    llm = ScriptedChat(script=[grade(score, verdict, missing=["  ", "the first variable is invalid"])])
    out = await graph.ainvoke(
        {"question": question, "answer": MOVE_ANSWER}, context=context(project, retriever, llm)
    )
    assert out["score"] == expected_score and out["verdict"] == expected_verdict
    assert out["missing_points"] == ["the first variable is invalid"]


async def test_multiple_choice_option_is_graded_exactly_without_the_model(
    project: Project, retriever: Retriever
) -> None:
    question = await store(
        retriever,
        project,
        question="What happens to a String assigned to another variable?",
        answer="It is moved",
        distractors=("It is copied", "It is cloned", "It is borrowed"),
    )
    llm = ScriptedChat(script=[])  # any model call fails the test
    right = await graph.ainvoke(
        {"question": question, "answer": "  it is MOVED. "}, context=context(project, retriever, llm)
    )
    assert right["score"] == 1.0 and right["verdict"] == "correct" and right["graded_by"] == "choice"
    assert [c.chunk_id for c in right["citations"]] == question["source_chunk_ids"]
    wrong = await graph.ainvoke(
        {"question": question, "answer": "It is copied"}, context=context(project, retriever, llm)
    )
    assert wrong["score"] == 0.0 and wrong["verdict"] == "incorrect" and wrong["graded_by"] == "choice"
    assert "It is moved" in wrong["feedback"] and wrong["missing_points"] == ["It is moved"]
    assert llm.prompts == []


async def test_multiple_choice_free_text_is_graded_by_the_model(
    project: Project, retriever: Retriever
) -> None:
    question = await store(
        retriever,
        project,
        question="What happens to a String assigned to another variable?",
        answer="It is moved",
        distractors=("It is copied", "It is cloned", "It is borrowed"),
    )
    llm = ScriptedChat(script=[grade(0.8)])
    out = await graph.ainvoke(
        {"question": question, "answer": "it gets moved to the new variable"},
        context=context(project, retriever, llm),
    )
    assert out["graded_by"] == "model" and out["verdict"] == "correct"
    assert "Options: It is moved | It is copied | It is cloned | It is borrowed" in llm.prompts[0]


async def test_question_whose_document_is_gone_is_graded_on_the_reference_alone(
    project: Project, retriever: Retriever
) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER, document=None)
    llm = ScriptedChat(script=[grade(0.2, "incorrect", used=[5])])
    out = await graph.ainvoke(
        {"question": question, "answer": "It is copied"}, context=context(project, retriever, llm)
    )
    assert "Excerpts:" not in llm.prompts[0] and excerpt_ids(llm.prompts[0]) == []
    assert out["citations"] == [] and out["invented_ids"] == [5] and out["verdict"] == "incorrect"


@pytest.mark.parametrize(
    ("answer", "expected_score", "expected_verdict"),
    [
        ("Rust has no garbage collector.", 0.9 * 0.25, "incorrect"),  # true but unrelated: a quarter
        ("s1 is moved into s2", 0.9 * 0.55, "partially_correct"),  # 1 of the reference's 5 key terms
        ("The first variable is moved away.", 0.9, "correct"),  # 3 of 5: full agreement
        ("O valor é movido e a primeira variável deixa de valer.", 0.9, "correct"),  # another language
    ],
)
async def test_the_score_is_scaled_by_agreement_with_the_reference(
    project: Project, retriever: Retriever, answer: str, expected_score: float, expected_verdict: str
) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER)
    llm = ScriptedChat(script=[grade(0.9, "correct")])  # the model accepts everything
    out = await graph.ainvoke(
        {"question": question, "answer": answer}, context=context(project, retriever, llm)
    )
    assert out["score"] == pytest.approx(expected_score, abs=1e-4) and out["verdict"] == expected_verdict


async def test_unparseable_grade_is_an_error(project: Project, retriever: Retriever) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER)
    llm = ScriptedChat(script=["not JSON", "still not JSON"])
    with pytest.raises(StructuredOutputError):
        await graph.ainvoke(
            {"question": question, "answer": "moved"}, context=context(project, retriever, llm)
        )


async def test_feedback_is_asked_in_the_projects_language(project: Project, retriever: Retriever) -> None:
    question = await store(retriever, project, question=MOVE_QUESTION, answer=MOVE_ANSWER)
    llm = ScriptedChat(script=[grade(1.0)])
    await graph.ainvoke(
        {"question": question, "answer": "movido"}, context=context(project, retriever, llm, "pt")
    )
    assert "Write the feedback in Portuguese." in llm.prompts[0]
