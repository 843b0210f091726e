"""The Content Planner graph with a scripted fake chat model and a fake retriever: the application, not
the model, decides which chunks support a section, its coverage and the gaps."""

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, cast

import pytest
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage

from agents.common.context import AgentContext
from agents.common.prose import excerpt
from agents.planner import config
from agents.planner.graph import coverage, graph, group_by_section, planner_input
from agents.planner.prompts import outline_messages
from core.retrieval import Candidate, Filters, Retriever
from core.retrieval.types import RetrievalResult, StageTimings

DOC = str(uuid.uuid4())


def chunk(
    chunk_id: int,
    score: float,
    section: str,
    text: str = "Some prose about Rust.",
    *,
    ordinal: int | None = None,
    document: str = DOC,
) -> Candidate:
    return Candidate(
        chunk_id=chunk_id,
        rerank_score=score,
        row={
            "document_id": document,
            "ordinal": chunk_id if ordinal is None else ordinal,
            "document_title": "Variables and Mutability",
            "section_path": ["Variables and Mutability", section],
            "page_start": None,
            "page_end": None,
            "text": f"### {section}\n\n{text}",
            "context_header": f"Variables and Mutability > {section}",
        },
    )


@dataclass
class FakeRetriever:
    results: list[Candidate]
    pool: list[Candidate] = field(default_factory=list)  # every candidate the reranker scored
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def search(self, **kwargs: Any) -> RetrievalResult:
        self.calls.append(kwargs)
        return RetrievalResult(
            query=kwargs["query"], profile=kwargs["profile"], reranker="fake", results=self.results,
            dense=[], lexical=[], fused=[], reranked=self.pool or self.results, timings=StageTimings(),
        )  # fmt: skip


def context(retriever: FakeRetriever, replies: list[dict[str, Any]], **extra: Any) -> AgentContext:
    llm = FakeMessagesListChatModel(responses=[AIMessage(content=json.dumps(r)) for r in replies])
    return AgentContext(
        project_id=uuid.uuid4(),
        user_id=uuid.uuid4(),
        retriever=cast(Retriever, retriever),
        llm=llm,
        structured_mode="llama-grammar",
        **extra,
    )


# Rerank scores over a pool whose weakest candidate scores 0.0 and best 1.0: relevance = the score.
# In retrieval order. As topics, in reading order (ordinal = chunk id here):
# [1] Constants 101, 102   [2] Shadowing 103, 105   [3] Comments 104.
CHUNKS = [
    chunk(101, 1.0, "Constants"),
    chunk(102, 0.8, "Constants"),
    chunk(103, 0.6, "Shadowing"),
    chunk(104, 0.3, "Comments"),
    chunk(105, 0.5, "Shadowing"),
]
POOL = [*CHUNKS, chunk(199, 0.0, "Elsewhere")]


async def test_outline_keeps_real_chunks_computes_coverage_and_lists_gaps() -> None:
    retriever = FakeRetriever(CHUNKS, POOL)
    draft = {
        "sections": [
            {"title": "Constants and shadowing", "goal": "Know const and let.", "sources": [1, 2, 1, 42]},
            {"title": "Comments", "goal": "Write comments.", "sources": [3]},
            {"title": "Ownership", "goal": "Who frees memory.", "sources": [77]},
        ]
    }
    ctx = context(retriever, [draft])
    out = await graph.ainvoke(planner_input("constants and shadowing", [], 5), context=ctx)

    first, second = out["sections"]
    assert first.chunk_ids == [101, 102, 103, 105]  # both topics' chunks, best first; 42 names no topic
    assert first.support == 4
    assert first.relevance == pytest.approx((1.0 + 0.8 + 0.6 + 0.5) / 4, abs=1e-3)
    assert first.coverage == pytest.approx(0.725, abs=1e-3)  # min(1, 4/3) x 0.725
    assert [s.section_path[-1] for s in first.sources] == ["Constants", "Constants", "Shadowing", "Shadowing"]
    assert second.chunk_ids == [104]
    assert second.coverage == pytest.approx(0.3 / config.FULL_SUPPORT, abs=1e-3)  # 1/3 x 0.3 = 0.1
    assert out["invented"] == [42, 77]

    gaps = {gap.title: gap for gap in out["gaps"]}
    assert set(gaps) == {"Comments", "Ownership"}  # thin, and proposed with no real support
    assert "thin material: 1 chunk(s)" in gaps["Comments"].reason
    assert gaps["Ownership"].coverage == 0.0
    assert "Ownership" not in [s.title for s in out["sections"]]
    assert out["unassigned_chunk_ids"] == []

    (call,) = retriever.calls
    assert call["profile"] == "planner"
    assert call["top_k"] == config.TOP_K
    assert call["project_id"] == ctx.project_id and call["user_id"] == ctx.user_id
    assert call["filters"] == Filters(kind="uploaded")
    assert "outline" in ctx.timings_ms


def test_topics_are_sections_in_reading_order_and_long_ones_are_cut() -> None:
    other = str(uuid.uuid4())
    retrieved = [
        chunk(7, 0.9, "Functions", document=other, ordinal=3),
        chunk(1, 0.8, "Constants", ordinal=5),
        *[
            chunk(20 + i, 0.5, "Parameters", document=other, ordinal=10 + i)
            for i in range(config.GROUP_CHUNKS + 1)
        ],
        chunk(2, 0.4, "Constants", ordinal=4),
    ]
    topics = group_by_section(retrieved)
    # The document seen first comes first; inside a document, sections in reading order.
    assert [[c.chunk_id for c in topic] for topic in topics] == [
        [7],
        [20, 21, 22, 23][: config.GROUP_CHUNKS],
        [20 + config.GROUP_CHUNKS],
        [2, 1],
    ]


async def test_relevance_is_scaled_over_the_whole_candidate_pool() -> None:
    # RRF-like scores (~0.03): scaled over the pool, so coverage does not depend on the reranker's scale.
    results = [chunk(1, 0.032, "A"), chunk(2, 0.030, "A"), chunk(3, 0.016, "B")]
    retriever = FakeRetriever(results, [*results, chunk(4, 0.016, "C")])
    draft = {
        "sections": [{"title": "A", "goal": "g", "sources": [1]}, {"title": "B", "goal": "g", "sources": [2]}]
    }
    out = await graph.ainvoke(planner_input("a", [], 5), context=context(retriever, [draft]))
    a, b = out["sections"]
    assert a.relevance == pytest.approx((1.0 + 0.875) / 2, abs=1e-3)
    assert a.coverage == pytest.approx(2 / 3 * 0.9375, abs=1e-3)
    assert b.relevance == 0.0 and b.coverage == 0.0
    assert [gap.title for gap in out["gaps"]] == ["B"]


async def test_extra_sections_are_cut_and_unused_chunks_reported() -> None:
    retriever = FakeRetriever(CHUNKS, POOL)
    draft = {"sections": [{"title": f"S{i}", "goal": "g", "sources": [1]} for i in range(4)]}
    out = await graph.ainvoke(planner_input("t", [], 2), context=context(retriever, [draft]))
    assert [s.title for s in out["sections"]] == ["S0", "S1"]
    assert out["unassigned_chunk_ids"] == [103, 105, 104]


async def test_no_material_means_one_gap_and_no_model_call() -> None:
    ctx = context(FakeRetriever([]), [])  # the fake model has no reply: calling it would fail
    out = await graph.ainvoke(planner_input("quantum physics", [], 5), context=ctx)
    assert out["sections"] == []
    assert [(g.title, g.coverage) for g in out["gaps"]] == [("quantum physics", 0.0)]
    assert "outline" not in ctx.timings_ms


async def test_a_malformed_reply_is_retried_once() -> None:
    retriever = FakeRetriever(CHUNKS, POOL)
    ctx = context(
        retriever, [{"sections": "not a list"}, {"sections": [{"title": "C", "goal": "g", "sources": [1]}]}]
    )
    out = await graph.ainvoke(planner_input("t", [], 5), context=ctx)
    assert [s.chunk_ids for s in out["sections"]] == [[101, 102]]
    assert ctx.usage.by_model[next(iter(ctx.usage.by_model))]["calls"] == 2


def test_whole_project_query_comes_from_titles_and_headings() -> None:
    headings = ["Variables and Mutability", "Constants", "Shadowing", "x" * 600]
    planned = planner_input(None, headings, 4)
    assert planned == {
        "topic": None,
        "query": "Variables and Mutability; Constants; Shadowing",
        "max_sections": 4,
    }
    assert planner_input(None, [], 4)["query"]  # an empty project still gets a query


def test_prompt_is_one_short_line_per_topic() -> None:
    long_text = "word " * 400
    chunks = [chunk(i, 1.0, f"Section {i}", long_text) for i in range(1, 19)]
    chunks += [chunk(30, 1.0, "Section 1", "<!-- hidden --> See [Chapter\n2][ch02] and `Vec<T>`.")]
    topics = group_by_section(chunks)
    system, human = outline_messages(topic="t", topics=topics, max_sections=5, language="pt")
    lines = [line for line in str(human.content).splitlines() if line.startswith("[")]
    assert len(lines) == 18
    assert lines[0].startswith("[1] Variables and Mutability > Section 1 (2 excerpts): word word")
    assert lines[1].startswith("[2] Variables and Mutability > Section 2 (1 excerpt): word word")
    assert "###" not in lines[0]  # the heading is in the header, not repeated in the excerpt
    assert all(len(line) < 200 for line in lines)
    assert "Portuguese" in str(system.content)


def test_markup_is_dropped_from_excerpts_but_code_is_kept() -> None:
    text = (
        "### Intro\n\n<!-- ignore --> See [Chapter\n2][ch02] and [docs](x.html) for `Vec<T>`. {{#include a}}"
    )
    assert excerpt(text, 200) == "See Chapter 2 and docs for `Vec<T>`."


def test_coverage_is_bounded() -> None:
    assert coverage(0, 1.0) == 0.0
    assert coverage(10, 1.0) == 1.0
    assert coverage(config.FULL_SUPPORT, 0.5) == 0.5
