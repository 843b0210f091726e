"""The Content Writer graph with a scripted fake chat model and a fake retriever: citations are mapped to
retrieved chunks, invented ones dropped, references built by the application. Then the write_note job
on the real database with the fake model."""

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, cast

import psycopg
import pytest
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from redis.asyncio import Redis

from agents.common.context import AgentContext
from agents.common.plan import PlanGap, PlanSection, SourceRef
from agents.writer import config
from agents.writer.graph import graph, map_citations, shared_section
from agents.writer.kinds import render_points
from agents.writer.state import Point, SectionDraft
from core.jobs.specs import IndexDocument, WriteNote
from core.retrieval import Candidate, Filters, Retriever
from core.retrieval.types import RetrievalResult, StageTimings
from core.runtime import Runtime
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.content import documents
from core.store.runs import notes, plans
from tests.stored import owned_project, uploaded_document
from tests.workers.runtime import job_runtime
from workers.jobs.index import index_document
from workers.jobs.notes import write_note

DOC = str(uuid.uuid4())
TITLE = "Variables and Mutability"


def chunk(
    chunk_id: int, section: str, text: str = "Prose.", pages: tuple[int, int] | None = None
) -> Candidate:
    return Candidate(
        chunk_id=chunk_id,
        rerank_score=0.5,
        row={
            "document_id": DOC,
            "document_title": TITLE,
            "section_path": [TITLE, section],
            "page_start": pages[0] if pages else None,
            "page_end": pages[1] if pages else None,
            "text": text,
            "context_header": f"{TITLE} > {section}",
        },
    )


CONSTANTS = [
    chunk(101, "Constants", "Constants are always immutable.", (3, 4)),
    chunk(102, "Constants", "Use const."),
]
SHADOWING = [chunk(103, "Shadowing", "A new let shadows the old name.", (5, 5)), CONSTANTS[0]]


@dataclass
class FakeRetriever:
    by_query: dict[str, list[Candidate]]  # results by the query's first word
    calls: list[dict[str, Any]] = field(default_factory=list)

    async def search(self, **kwargs: Any) -> RetrievalResult:
        self.calls.append(kwargs)
        results = self.by_query.get(kwargs["query"].split()[0].strip("."), [])
        return RetrievalResult(
            query=kwargs["query"], profile=kwargs["profile"], reranker="fake", results=results,
            dense=[], lexical=[], fused=[], reranked=results, timings=StageTimings(),
        )  # fmt: skip


def planned(title: str, goal: str, chunks: list[Candidate]) -> PlanSection:
    sources = [
        SourceRef(
            chunk_id=c.chunk_id,
            document_id=DOC,
            document_title=TITLE,
            section_path=c.row["section_path"],
            page_start=None,
            page_end=None,
            relevance=0.5,
        )
        for c in chunks
    ]
    ids = [c.chunk_id for c in chunks]
    return PlanSection(
        title=title, goal=goal, chunk_ids=ids, sources=sources, support=len(ids), relevance=0.5, coverage=0.5
    )


def points(*pairs: tuple[str, int]) -> str:
    """A section reply: key points with the number of their source."""
    return json.dumps({"points": [{"text": text, "source": source} for text, source in pairs]})


def context(retriever: FakeRetriever, replies: list[str]) -> AgentContext:
    return AgentContext(
        project_id=uuid.uuid4(),
        user_id=uuid.uuid4(),
        retriever=cast(Retriever, retriever),
        llm=FakeMessagesListChatModel(responses=[AIMessage(content=r) for r in replies]),
        structured_mode="llama-grammar",
    )


def test_citation_numbers_map_to_shown_chunks_and_invented_ones_are_dropped() -> None:
    sources = [chunk(101, "A"), chunk(102, "A"), chunk(103, "B")]
    text = (
        "Constants never change [1]. They use const [2, 9]. Shadowing [^3] and [Source 1] too [7].\n"
        "Code is not cited: `v[2]` or\n```rust\nlet x = a[1];\n```\nnor is arr[3], nor a [link](1) or [1](http://x).\n"
        "A chunk id the model saw is kept [102]; an unknown one is not [555]."
    )
    body, cited, dropped = map_citations(text, sources)
    assert body.startswith(
        "Constants never change [^chunk-101]. They use const [^chunk-102]. "
        "Shadowing [^chunk-103] and [^chunk-101] too.\n"
    )
    assert "`v[2]`" in body and "let x = a[1];" in body and "arr[3]" in body and "[1](http://x)" in body
    assert body.endswith("is kept [^chunk-102]; an unknown one is not.")
    assert cited == [101, 102, 103]
    assert dropped == ["9", "7", "555"]


def test_points_become_bullets_cut_to_the_limits() -> None:
    draft = SectionDraft(
        points=[Point(text=f"  Fact\n {i}.", source=i) for i in range(1, 10)] + [Point(text=" ", source=1)]
    )
    assert render_points(draft).splitlines()[:2] == ["- Fact 1. [1]", "- Fact 2. [2]"]
    assert len(render_points(draft).splitlines()) == config.MAX_POINTS
    long = SectionDraft(points=[Point(text="word " * 200, source=1)])
    assert len(render_points(long)) <= config.POINT_CHARS + len("- ") + len(" [1]")
    assert render_points(long).endswith("word… [1]")  # cut after a whole word, never inside one
    # A reply the grammar cut at maxLength ends after its last whole sentence.
    cut = SectionDraft(points=[Point(text="A first sentence. " * 20 + "An unfinished sen", source=2)])
    assert render_points(cut).endswith("A first sentence. [2]")


def test_preferred_section_is_what_the_planned_chunks_share() -> None:
    assert shared_section(planned("C", "g", CONSTANTS)) == (TITLE, "Constants")
    assert shared_section(planned("S", "g", SHADOWING)) == (TITLE,)
    assert shared_section(planned("E", "g", [])) == ()


async def test_note_is_written_section_by_section_with_references() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS, "Shadowing": SHADOWING})
    replies = [
        points(("Constants are always immutable.", 1), ("Declare them with const [2].", 8), ("Typed.", 2)),
        points(("Shadowing reuses a name with a new let.", 9)),  # no real source at all
    ]
    ctx = context(retriever, replies)
    gap = PlanGap(title="Ownership", reason="no retrieved chunk supports this section")
    out = await graph.ainvoke(
        {
            "title": "Variables",
            "sections": [
                planned("Constants", "Know const.", CONSTANTS),
                planned("Shadowing", "Reuse names.", SHADOWING),
            ],
            "gaps": [gap],
        },
        context=ctx,
    )
    first, second = out["written"]
    assert first.cited_chunk_ids == [101, 102]
    assert first.dropped_citations == ["8"]  # the point's own [2] is kept, its invented source dropped
    assert not first.uncited
    assert second.uncited and second.cited_chunk_ids == []

    markdown = out["markdown"]
    assert markdown.startswith(
        "# Variables\n\n## Constants\n\n- Constants are always immutable. [^1]\n"
        "- Declare them with const [^2].\n- Typed. [^2]\n"
    )
    assert "[8]" not in markdown and "[9]" not in markdown
    # The uncited section names the chunks it was written from, numbered on from the first section.
    assert "- Shadowing reuses a name with a new let.\n\n*Sources:* [^3] [^1]" in markdown
    assert (
        "## Not covered by the material\n\n- Ownership: no retrieved chunk supports this section" in markdown
    )
    assert markdown.rstrip().endswith(
        "## References\n\n"
        f"[^1]: {TITLE}, {TITLE} › Constants, pp. 3–4\n"
        f"[^2]: {TITLE}, {TITLE} › Constants\n"
        f"[^3]: {TITLE}, {TITLE} › Shadowing, p. 5"
    )
    assert [(r.number, r.chunk_id) for r in out["references"]] == [(1, 101), (2, 102), (3, 103)]

    assert [call["profile"] for call in retriever.calls] == ["writer", "writer"]
    assert retriever.calls[0]["query"] == "Constants. Know const."
    assert retriever.calls[0]["prefer_section"] == (TITLE, "Constants")
    assert retriever.calls[1]["prefer_section"] == (TITLE,)
    assert all(call["filters"] == Filters(kind="uploaded") for call in retriever.calls)
    assert all(
        call["project_id"] == ctx.project_id and call["user_id"] == ctx.user_id for call in retriever.calls
    )


async def test_a_section_without_material_is_skipped_without_a_model_call() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS})
    ctx = context(retriever, [points(("Constants are immutable.", 1))])  # a second call would fail
    out = await graph.ainvoke(
        {
            "title": "T",
            "sections": [planned("Lifetimes", "g", []), planned("Constants", "g", CONSTANTS)],
            "gaps": [],
        },
        context=ctx,
    )
    skipped, written = out["written"]
    assert skipped.skipped and skipped.body == ""
    assert "## Lifetimes" not in out["markdown"]
    assert "- Lifetimes: no material was retrieved for this section" in out["markdown"]
    assert written.cited_chunk_ids == [101]


async def test_an_empty_reply_leaves_the_section_out() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS})
    section = planned("Constants", "g", CONSTANTS)
    out = await graph.ainvoke(
        {"title": "T", "sections": [section], "gaps": []}, context=context(retriever, [points()])
    )
    assert out["written"][0].skipped == "the model wrote nothing for this section"
    assert "## Constants" not in out["markdown"] and "- Constants: the model wrote nothing" in out["markdown"]


async def test_planned_chunks_found_again_come_first_and_at_most_five_are_shown() -> None:
    many = [chunk(200 + i, "Constants") for i in range(9)]
    retriever = FakeRetriever({"Constants": many})
    section = planned("Constants", "g", [many[8]])
    out = await graph.ainvoke(
        {"title": "T", "sections": [section], "gaps": []}, context=context(retriever, [points(("Text.", 1))])
    )
    (written,) = out["written"]
    assert [s.chunk_id for s in written.sources] == [208, 200, 201, 202, 203]
    assert written.cited_chunk_ids == [208]


# The job itself, on the real database and embeddings, with the fake chat model: it plans, writes,
# saves a generated document and queues its indexing; indexing it makes the note searchable.

NOTE_SOURCE = (
    "# Variables\n\n## Constants\n\nConstants are values bound to a name that are never allowed to change."
    " They are declared with the const keyword instead of let, the type of the value must be annotated,"
    " and they may be declared in any scope, including the global scope.\n\n## Shadowing\n\nYou can"
    " declare a new variable with the same name as a previous variable: the first variable is shadowed"
    " by the second. Shadowing differs from mut because a new let creates a new variable, so its type"
    " may change while the name is reused.\n"
)


@dataclass
class RecordingQueue:
    """Records enqueued jobs; the job's model calls still go through the real Redis admission queue."""

    redis: Redis
    jobs: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)

    async def enqueue_job(self, *args: Any, **kwargs: Any) -> None:
        self.jobs.append((args, kwargs))

    def register_script(self, script: str) -> Any:
        return self.redis.register_script(script)


@pytest.fixture(scope="module")
async def runtime(settings: Settings, services: ServiceUrls) -> AsyncIterator[Runtime]:
    async with job_runtime(settings, services, pool_size=3) as opened:
        yield dataclasses.replace(opened, redis=RecordingQueue(opened.redis))


def queued(runtime: Runtime) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    return cast(RecordingQueue, runtime.redis).jobs


@pytest.fixture(scope="module")
async def indexed_project(runtime: Runtime, db: psycopg.AsyncConnection) -> dict[str, Any]:
    user, project = await owned_project(db, "writer", name="Rust")
    document = await uploaded_document(
        db, project.id, user.id, "variables.md", NOTE_SOURCE.encode(), title="Variables"
    )
    indexed = await index_document(runtime, IndexDocument(project.id, document.id, 1))
    assert indexed["status"] == "succeeded", indexed
    return {"user_id": user.id, "project_id": project.id}


async def new_job(db: psycopg.AsyncConnection, project: dict[str, Any], topic: str) -> str:
    job_id = notes.new_note_job_id()
    job = await notes.create_note_job(db, **project, job_id=job_id, request={"topic": topic})
    assert job is not None and job.status == "queued"
    return job_id


async def test_job_plans_writes_saves_and_queues_the_note_for_indexing(
    runtime: Runtime, indexed_project: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    outline = {
        "sections": [
            {"title": "Constants", "goal": "Know const.", "sources": [1, 2]},
            {"title": "Shadowing", "goal": "Reuse a name.", "sources": [2]},
            {"title": "Lifetimes", "goal": "Borrowing scopes.", "sources": [40]},  # no such excerpt
        ]
    }
    replies = [
        AIMessage(content=json.dumps(outline)),
        AIMessage(content=points(("Constants never change and use the const keyword.", 1), ("Invented.", 9))),
        AIMessage(content=points(("A new let shadows the previous variable, and its type may change.", 1))),
    ]
    scripted = dataclasses.replace(runtime, llm=FakeMessagesListChatModel(responses=replies))
    project_id = str(indexed_project["project_id"])
    job_id = await new_job(db, indexed_project, "constants and shadowing")
    request = WriteNote(**indexed_project, job_id=job_id, topic="constants and shadowing", max_sections=4)

    result = await write_note(scripted, request)

    assert result["status"] == "succeeded", result
    job = await (await db.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))).fetchone()
    assert (job["kind"], job["status"], job["stage"], job["done"], job["total"]) == (
        "write_note", "succeeded", "done", 2, 2,
    )  # fmt: skip
    assert str(job["document_id"]) == result["document_id"] == job["result"]["document_id"]
    assert job["result"]["dropped_citations"] == 1

    document = await documents.get_document(db, **indexed_project, document_id=job["document_id"])
    assert document is not None
    assert (document.kind, document.source_type, document.title) == (
        "generated", "markdown", "Study note: constants and shadowing",
    )  # fmt: skip
    content = await documents.latest_content(db, **indexed_project, document_id=job["document_id"])
    note = content.decode() if content else ""
    assert "## Constants\n\n- Constants never change and use the const keyword. [^1]\n- Invented.\n" in note
    assert "[9]" not in note
    assert "- Lifetimes: no retrieved chunk supports this section" in note
    assert "## References\n\n[^1]: Variables, Variables › " in note

    plan = await plans.get_plan(db, **indexed_project, plan_id=result["plan_id"])
    assert plan is not None and plan.topic == "constants and shadowing"
    assert [s["title"] for s in plan.outline["sections"]] == ["Constants", "Shadowing"]

    (args, kwargs), *_ = [entry for entry in queued(scripted) if entry[0][2] == result["document_id"]]
    assert args == ("index_document", project_id, result["document_id"], 1)
    assert kwargs == {"_job_id": f"index:{result['document_id']}:1", "_queue_name": "studyai:queue"}

    # Indexed like an upload, the note is searchable, as a generated document.
    note_document = IndexDocument(indexed_project["project_id"], uuid.UUID(result["document_id"]), 1)
    indexed = await index_document(scripted, note_document)
    assert indexed["status"] == "succeeded"
    found = await scripted.retriever.search(
        project_id=indexed_project["project_id"],
        user_id=indexed_project["user_id"],
        query="constants never change const keyword",
        profile="search",
        filters=Filters(kind="generated"),
    )
    assert found.results and str(found.results[0].row["document_id"]) == result["document_id"]
    assert "const keyword" in found.results[0].text

    # A rerun of the finished job (a lost acknowledgement) returns the same note and writes none.
    again = await write_note(scripted, request)
    assert again["document_id"] == result["document_id"]
    count = await (
        await db.execute(
            "SELECT count(*) AS n FROM documents WHERE project_id = %s AND kind = 'generated'",
            (indexed_project["project_id"],),
        )
    ).fetchone()
    assert count["n"] == 1


async def test_job_without_a_chat_model_fails_with_the_reason(
    runtime: Runtime, indexed_project: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    job_id = await new_job(db, indexed_project, "constants")
    result = await write_note(
        dataclasses.replace(runtime, llm=None), WriteNote(**indexed_project, job_id=job_id, topic="constants")
    )
    assert result["status"] == "failed"
    job = await (await db.execute("SELECT * FROM jobs WHERE id = %s", (job_id,))).fetchone()
    assert job["status"] == "failed" and "No chat model" in job["error"] and job["document_id"] is None


async def test_job_with_a_plan_of_another_project_fails(
    runtime: Runtime, indexed_project: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    job_id = await new_job(db, indexed_project, "x")
    result = await write_note(
        dataclasses.replace(runtime, llm=FakeMessagesListChatModel(responses=[])),
        WriteNote(**indexed_project, job_id=job_id, plan_id=uuid.uuid4()),
    )
    assert result == {"status": "failed", "error": "The plan was not found in this project."}


# The other kinds: a study guide, an FAQ and a glossary, cited the same way as a note.


async def test_study_guide_has_cited_concepts_with_check_questions() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS})
    concept = {
        "name": "Constants",
        "explanation": "Constants never change.",
        "source": 1,
        "check_question": "Can a constant be made mutable?",
        "check_answer": "No, never.",
    }
    invented = {**concept, "name": "Statics", "explanation": "Statics live forever.", "source": 7}
    reply = json.dumps({"concepts": [concept, invented]})
    out = await graph.ainvoke(
        {"title": "Study guide: T", "sections": [planned("Constants", "g", CONSTANTS)], "gaps": [],
         "kind": "study_guide"},
        context=context(retriever, [reply]),
    )  # fmt: skip
    markdown = out["markdown"]
    assert (
        "## Constants\n\n### Constants\n\nConstants never change. [^1]\n\n"
        "*Check yourself:* Can a constant be made mutable?\n*Answer:* No, never.\n\n"
        "### Statics\n\nStatics live forever."
    ) in markdown
    assert out["written"][0].dropped_citations == ["7"]
    assert markdown.rstrip().endswith(f"[^1]: {TITLE}, {TITLE} › Constants, pp. 3–4")


async def test_faq_and_its_prompt() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS})
    entries = [{"question": "Do constants change?", "answer": "No: use const.", "source": 2}]
    llm_context = context(retriever, [json.dumps({"entries": entries})])
    out = await graph.ainvoke(
        {"title": "FAQ: T", "sections": [planned("Constants", "g", CONSTANTS)], "gaps": [], "kind": "faq"},
        context=llm_context,
    )
    assert "## Constants\n\n**Do constants change?**\n\nNo: use const. [^1]\n" in out["markdown"]
    assert out["references"][0].chunk_id == 102


async def test_glossary_is_one_alphabetical_list_of_cited_terms() -> None:
    retriever = FakeRetriever({"Constants": CONSTANTS, "Shadowing": SHADOWING})
    first = {
        "terms": [
            {"term": "const", "definition": "Declares a constant.", "source": 2},
            {"term": "Constant", "definition": "A value that never changes.", "source": 1},
        ]
    }
    second = {"terms": [{"term": "Shadowing", "definition": "A new let reuses a name.", "source": 9},
                        {"term": "constant", "definition": "Said again.", "source": 1}]}  # fmt: skip
    out = await graph.ainvoke(
        {
            "title": "Glossary: T",
            "sections": [planned("Constants", "g", CONSTANTS), planned("Shadowing", "g", SHADOWING)],
            "gaps": [],
            "kind": "glossary",
        },
        context=context(retriever, [json.dumps(first), json.dumps(second)]),
    )
    lines = [line for line in out["markdown"].splitlines() if line.startswith("- **")]
    assert lines == [
        "- **const**: Declares a constant. [^1]",
        "- **Constant**: A value that never changes. [^2]",
        "- **Shadowing**: A new let reuses a name. [^3] [^2]",  # its citation invented: the section's sources
    ]
    assert "## Constants" not in out["markdown"]
    assert "[^3]: Variables and Mutability, Variables and Mutability › Shadowing, p. 5" in out["markdown"]


async def test_job_writes_a_glossary_as_a_generated_document(
    runtime: Runtime, indexed_project: dict[str, Any], db: psycopg.AsyncConnection
) -> None:
    outline = {"sections": [{"title": "Constants", "goal": "Know const.", "sources": [1]}]}
    terms = {"terms": [{"term": "const", "definition": "The keyword that declares a constant.", "source": 1}]}
    replies = [AIMessage(content=json.dumps(outline)), AIMessage(content=json.dumps(terms))]
    scripted = dataclasses.replace(runtime, llm=FakeMessagesListChatModel(responses=replies))
    job_id = await new_job(db, indexed_project, "constants")
    note = WriteNote(**indexed_project, job_id=job_id, topic="constants", max_sections=2, kind="glossary")
    result = await write_note(scripted, note)
    assert result["status"] == "succeeded" and result["kind"] == "glossary", result
    document = await documents.get_document(db, **indexed_project, document_id=result["document_id"])
    assert document is not None and document.title == "Glossary: constants"
    assert document.filename == "glossary-constants.md" and document.kind == "generated"
    content = await documents.latest_content(db, **indexed_project, document_id=result["document_id"])
    assert content is not None
    glossary = "# Glossary: constants\n\n- **const**: The keyword that declares a constant. [^1]\n"
    assert glossary in content.decode()
    assert "## References\n\n[^1]: Variables, Variables › " in content.decode()
