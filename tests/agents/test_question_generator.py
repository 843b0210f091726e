"""The Question Generator graph with a scripted fake chat model, on a real project (Postgres, chunks
indexed by the real worker, real embeddings): every branch of selection, checking and storing."""

import json
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import psycopg
import pytest
from langchain_core.language_models import BaseChatModel

from agents.question_generator.checks import answer_support
from agents.question_generator.config import GeneratorConfig
from agents.question_generator.graph import graph
from core.retrieval import Retriever
from core.store.sql.listing import Page
from core.store.study import questions
from tests.agents.helpers import Project, ScriptedChat, context
from tests.bank import draft


@pytest.fixture(autouse=True)
async def empty_bank(project: Project, db: psycopg.AsyncConnection[dict[str, Any]]) -> None:
    await db.execute("DELETE FROM questions WHERE project_id = %s", (project.id,))


def shown(prompt: str) -> dict[int, str]:
    """The source chunks in a generation prompt: id -> text."""
    return {int(m[1]): m[2] for m in re.finditer(r"^\[(\d+)\] [^:\n]*: (.*)$", prompt, re.MULTILINE)}


def reply(
    question: str,
    *,
    answer: str | None = None,
    sources: list[int] | None = None,
    confidence: float = 0.9,
    distractors: list[str] | None = None,
) -> Callable[[str], str]:
    """A reply to whatever the prompt asks: by default the answer is copied from the first source."""

    def step(prompt: str) -> str:
        given = shown(prompt)
        first_id, first_text = next(iter(given.items()))
        body: dict[str, Any] = {
            "question": question,
            "answer": answer if answer is not None else " ".join(first_text.split()[:8]),
            "explanation": "The source says so.",
            "difficulty": "medium",
            "confidence": confidence,
            "sources": sources if sources is not None else [first_id],
        }
        if "multiple-choice" in prompt:
            body["distractors"] = distractors or ["A stack frame", "A garbage collector", "A thread pool"]
        return json.dumps(body)

    return step


async def generate(
    project: Project,
    retriever: Retriever,
    llm: BaseChatModel,
    document: str | None = None,
    language: str = "en",
    **inputs: Any,
) -> dict[str, Any]:
    """One run of the graph on the course with `llm` as the model, on one of its documents if named."""
    if document is not None:
        inputs["document_id"] = project.documents[document]
    return await graph.ainvoke(inputs, context=context(project, retriever, llm, language))


SINGLE = GeneratorConfig(chunks_per_question=1)  # one chunk per call: more calls available in a small doc


async def test_generates_valid_questions_of_each_type_from_a_document(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable after a String is moved to another variable?"),
            reply("How are methods defined on a struct?"),
            reply("Which kinds of values implement the Copy trait?"),
        ]
    )
    ctx = context(project, retriever, llm)
    document = project.documents["ownership.md"]
    out = await graph.ainvoke({"n": 3, "document_id": document, "topic": "Ownership"}, context=ctx)
    saved = out["saved"]
    assert [q.type for q in saved] == ["multiple_choice", "short_answer", "application"]
    assert out["rejected"] == [] and out["reason"] is None
    for question, prompt in zip(saved, llm.prompts, strict=True):
        assert question.status == "active" and question.support == 1.0
        assert question.document_id == document
        assert set(question.source_chunk_ids) <= set(shown(prompt))  # only what the model was shown
        assert all(project.chunks[i]["document_id"] == document for i in question.source_chunk_ids)
        assert question.section_path == project.chunks[question.source_chunk_ids[0]]["section_path"]
        assert len(prompt) < 2200  # short prompts: the 1.5B model reads ~100 tokens/s
    assert saved[0].distractors == ["A stack frame", "A garbage collector", "A thread pool"]
    assert saved[1].distractors == []
    assert "multiple-choice" in llm.prompts[0] and "short-answer" in llm.prompts[1]
    assert "application question" in llm.prompts[2]
    # Each call gets its own sources: three different groups of chunks.
    assert len({tuple(sorted(shown(p))) for p in llm.prompts}) == 3
    stored = await retriever_rows(retriever, project)
    assert {row.id for row in stored} == {q.id for q in saved}
    assert {"sources", "generate", "embed", "save"} <= ctx.timings_ms.keys()
    assert sum(entry["calls"] for entry in ctx.usage.by_model.values()) == 3


async def retriever_rows(retriever: Retriever, project: Project) -> list[questions.Question]:
    async with retriever.pool.connection() as conn:
        return await questions.list_questions(
            conn,
            project_id=project.id,
            user_id=project.user_id,
            which=questions.BankFilter(statuses=["active", "review", "archived"]),
            page=Page(limit=50, offset=0),
        )


async def test_low_confidence_question_goes_to_review(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            # Sure of itself, but the answer is nowhere in the source: review.
            reply(
                "How often does the runtime collect unused memory?",
                answer="Every few seconds, in a background thread",
                confidence=0.95,
            ),
            # Unsure, but the answer is the source's own words: active.
            reply("What happens to the first variable after a String is moved?", confidence=0.2),
        ]
    )
    out = await generate(project, retriever, llm, "ownership.md", n=2, types=("short_answer",), config=SINGLE)
    low, high = out["saved"]
    assert low.status == "review" and low.support < 0.3
    assert low.confidence == pytest.approx(0.4 * 0.95 + 0.6 * low.support, abs=1e-3)
    assert low.confidence < SINGLE.confidence_threshold
    assert high.status == "active" and high.confidence == pytest.approx(0.4 * 0.2 + 0.6 * 1.0, abs=1e-3)
    assert high.model_confidence == pytest.approx(0.2)


async def test_question_pointing_at_its_source_goes_to_review(project: Project, retriever: Retriever) -> None:
    """Students never see the chunk, so "according to the text" cannot be answered."""
    llm = ScriptedChat(script=[reply("What does the source text say about moves?", confidence=1.0)])
    out = await generate(project, retriever, llm, "ownership.md", n=1, types=("short_answer",))
    [saved] = out["saved"]
    assert saved.confidence == pytest.approx(1.0) and saved.status == "review"


async def test_confidence_threshold_is_configurable(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[reply("What does clone copy?", confidence=0.9)])
    strict = replace(SINGLE, confidence_threshold=0.99)
    out = await generate(project, retriever, llm, "ownership.md", n=1, types=("short_answer",), config=strict)
    assert out["saved"][0].status == "review" and out["saved"][0].confidence == pytest.approx(0.96)


async def test_duplicate_of_a_stored_question_is_skipped(project: Project, retriever: Retriever) -> None:
    moved = ScriptedChat(
        script=[reply("What happens to the first variable after a String is moved to another variable?")]
    )
    first = await generate(
        project, retriever, moved, "ownership.md", n=1, types=("short_answer",), config=SINGLE
    )
    original = first["saved"][0]
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable once a String has been moved into another variable?"),
            reply("How many mutable references to a value may exist at the same time?"),
        ]
    )
    out = await generate(project, retriever, llm, "ownership.md", n=1, types=("short_answer",), config=SINGLE)
    [skipped] = out["rejected"]
    assert skipped.reason == "duplicate" and skipped.duplicate_of == original.id
    assert skipped.similarity >= 0.92
    # The skipped one was replaced by another call.
    assert [q.question for q in out["saved"]] == [
        "How many mutable references to a value may exist at the same time?"
    ]
    assert len(await retriever_rows(retriever, project)) == 2


async def test_duplicate_within_one_run_is_skipped(project: Project, retriever: Retriever) -> None:
    same = "Which keyword makes a variable mutable?"
    llm = ScriptedChat(script=[reply(same), reply(same + " "), reply("How are methods defined on a struct?")])
    out = await generate(project, retriever, llm, "structs.md", n=2, types=("short_answer",), config=SINGLE)
    assert [q.question for q in out["saved"]] == [same, "How are methods defined on a struct?"]
    [skipped] = out["rejected"]
    assert skipped.reason == "duplicate" and skipped.duplicate_of is None and skipped.similarity > 0.99


async def test_near_duplicate_cannot_be_inserted_twice(project: Project, retriever: Retriever) -> None:
    """The store's guarded insert (the race between two runs), without the graph's earlier check."""
    text = "What does the borrow checker enforce?"
    embedding = np.asarray(retriever.embeddings.embed_query(text), dtype=np.float32)
    chunk_id = next(iter(project.chunks))
    item = draft(
        text,
        "The borrow rules",
        embedding,
        document_id=project.chunks[chunk_id]["document_id"],
        explanation="x",
        source_chunk_ids=[chunk_id],
    )
    async with retriever.pool.connection() as conn:
        stored = await questions.insert_question(
            conn, project_id=project.id, user_id=project.user_id, question=item, duplicate_similarity=0.92
        )
        again = await questions.insert_question(
            conn, project_id=project.id, user_id=project.user_id, question=item, duplicate_similarity=0.92
        )
    assert stored is not None and again is None


async def test_invented_source_ids_are_dropped(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            reply("What does a string slice refer to?", sources=[987654321]),  # nothing real: discarded
            lambda prompt: reply("What does clone copy?", sources=[987654321, *shown(prompt)])(prompt),
        ]
    )
    out = await generate(project, retriever, llm, "ownership.md", n=1, types=("short_answer",), config=SINGLE)
    [rejected] = out["rejected"]
    assert rejected.reason == "no_valid_source" and "987654321" in rejected.detail
    [saved] = out["saved"]
    assert saved.source_chunk_ids == list(shown(llm.prompts[1]))
    assert 987654321 not in saved.source_chunk_ids


@pytest.mark.parametrize(
    "distractors",
    [
        ["the value is moved", "It is copied", "It is cloned"],  # the answer again, other case and dot
        ["It is copied", "it is copied", "It is cloned"],  # two the same
        ["It is copied", "", "It is cloned"],  # an empty one
    ],
    ids=["equals-answer", "repeated", "empty"],
)
async def test_multiple_choice_needs_three_distinct_wrong_options(
    project: Project, retriever: Retriever, distractors: list[str]
) -> None:
    llm = ScriptedChat(
        script=[
            reply(
                "What happens to a String assigned to another variable?",
                answer="The value is moved.",
                distractors=distractors,
            )
        ]
    )
    out = await generate(
        project,
        retriever,
        llm,
        "ownership.md",
        n=1,
        types=("multiple_choice",),
        config=replace(SINGLE, extra_calls=0),
    )
    assert out["saved"] == []
    assert [r.reason for r in out["rejected"]] == ["bad_distractors"]


async def test_empty_fields_and_unparseable_replies_are_discarded(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            "this is not JSON",
            "neither is this",  # the one retry ask_structured allows
            reply("   ", answer="moved"),
            reply("What happens to the first variable after a String is moved?"),
        ]
    )
    out = await generate(project, retriever, llm, "ownership.md", n=1, types=("short_answer",), config=SINGLE)
    assert [r.reason for r in out["rejected"]] == ["invalid_output", "empty_field"]
    assert len(out["saved"]) == 1


async def test_calls_are_bounded_when_every_reply_is_discarded(
    project: Project, retriever: Retriever
) -> None:
    bad = reply("What does a string slice refer to?", sources=[1])
    llm = ScriptedChat(script=[bad] * 10)
    out = await generate(project, retriever, llm, "ownership.md", n=2, config=replace(SINGLE, extra_calls=1))
    assert out["saved"] == [] and len(out["rejected"]) == 3
    assert len(llm.prompts) == 3  # n + extra_calls, not the whole script


async def test_section_filter_keeps_the_sources_in_the_section(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(script=[reply("What does struct update syntax do?")])
    out = await generate(
        project,
        retriever,
        llm,
        n=1,
        section=("Structs", "Update syntax"),
        topic="Structs Update syntax",
        types=("short_answer",),
    )
    [saved] = out["saved"]
    for chunk_id in shown(llm.prompts[0]):
        assert project.chunks[chunk_id]["section_path"][:2] == ["Structs", "Update syntax"]
    assert saved.section_path[:2] == ["Structs", "Update syntax"]


async def test_without_a_filter_sources_are_spread_across_documents(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(script=[reply("What does clone copy?"), reply("What is a tuple struct?")])
    out = await generate(project, retriever, llm, n=2, types=("short_answer",), config=SINGLE)
    assert {q.document_id for q in out["saved"]} == set(project.documents.values())


async def test_unused_chunks_are_preferred(project: Project, retriever: Retriever) -> None:
    first = ScriptedChat(script=[reply("What does clone copy?")])
    one = await generate(project, retriever, first, "structs.md", n=1, config=SINGLE, types=("short_answer",))
    second = ScriptedChat(script=[reply("What is a tuple struct?")])
    await generate(project, retriever, second, "structs.md", n=1, config=SINGLE, types=("short_answer",))
    assert not set(shown(second.prompts[0])) & set(one["saved"][0].source_chunk_ids)


async def test_no_matching_material_ends_without_a_model_call(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[])
    out = await generate(project, retriever, llm, n=3, section=("No such chapter",))
    assert out["reason"] == "no_sources" and out["saved"] == [] and llm.prompts == []


async def test_portuguese_project_asks_for_portuguese(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(script=[reply("O que acontece quando uma String é movida?")])
    await generate(project, retriever, llm, "ownership.md", language="pt", n=1, types=("short_answer",))
    assert "Write in Portuguese." in llm.prompts[0]


def test_answer_support_counts_key_terms_found_in_the_source() -> None:
    source = "When a String is assigned to another variable the value is moved."
    assert answer_support("The value is moved", source) == 1.0
    assert answer_support("the values were assigned", source) == 1.0  # crude stemming: values ~ value
    assert answer_support("It is copied to the stack", source) == 0.0
    assert answer_support("moved to the stack", source) == 0.5
    assert answer_support("?", source) == 0.5  # nothing to check


async def test_flashcards_are_grounded_pending_items_in_the_projects_language(
    project: Project, retriever: Retriever
) -> None:
    llm = ScriptedChat(
        script=[
            reply("Borrow checker", sources=None),
            reply("Move", answer="Move"),  # the back repeats the front: discarded
            reply("O que é uma fatia de string?"),
        ]
    )
    out = await generate(
        project, retriever, llm, "ownership.md", language="pt", n=2, types=("flashcard",), config=SINGLE
    )
    assert [r.reason for r in out["rejected"]] == ["bad_flashcard"]
    assert [q.type for q in out["saved"]] == ["flashcard", "flashcard"]
    for card, prompt in zip(out["saved"], [llm.prompts[0], llm.prompts[2]], strict=True):
        assert card.review_state == "pending" and card.flag is None and card.created_by_me
        assert card.distractors == [] and card.support == 1.0 and 0 <= card.confidence <= 1
        assert set(card.source_chunk_ids) <= set(shown(prompt))
    assert all("flashcard" in p and "Write in Portuguese." in p for p in llm.prompts)
    assert "distractors" not in llm.prompts[0]


async def test_default_types_include_flashcards(project: Project, retriever: Retriever) -> None:
    llm = ScriptedChat(
        script=[
            reply("What happens to the first variable after a String is moved to another variable?"),
            reply("How are methods defined on a struct?"),
            reply("Which kinds of values implement the Copy trait?"),
            reply("Dangling reference"),
        ]
    )
    out = await generate(project, retriever, llm, n=4, config=SINGLE)
    types = ["multiple_choice", "short_answer", "application", "flashcard"]
    assert [q.type for q in out["saved"]] == types
