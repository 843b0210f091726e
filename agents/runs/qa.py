"""A RAG QA turn for the API: the caller's thread (its history rewrites follow-ups), the graph run
(whole, or as stream steps), the turn stored with its history row. "What should I study next?" is
answered from the caller's own mastery, without the model.

Connections are borrowed around the SQL only: one to open the thread, none while the graph runs or
streams (its retriever borrows its own), one at the end to store the turn."""

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from psycopg_pool import AsyncConnectionPool

from agents.common.citations import citation_for
from agents.qa import DEFAULT_CONFIG
from agents.qa.state import DocumentRef, QAInput
from agents.qa.study_next import study_next_reply
from agents.qa.threads import history_from_messages, turn_messages
from agents.runs.audit import Audit
from agents.runs.errors import NotFound, Unprocessable
from agents.runs.service import AgentRunner, Graph
from agents.runs.specs import QA
from agents.runs.steps import Failed, Finished, Step, Token
from core.llm.admission import Ticket
from core.retrieval import Candidate
from core.store.content import documents
from core.store.runs import threads
from core.store.runs.history import RunRecord
from core.store.study import questions
from core.study import service as study


@dataclass(frozen=True)
class Ask:
    question: str
    thread_id: UUID | None  # a follow-up in the caller's own thread; None starts one
    stream: bool


@dataclass(frozen=True)
class QATurn:
    """A stored turn: the graph's result and what its reply reports with it."""

    result: dict[str, Any]
    thread_id: UUID | None  # None when threads are not kept
    request_id: str
    timings_ms: dict[str, float]
    tokens: dict[str, dict[str, int]]


@dataclass(frozen=True)
class Answered:
    """A stream's last step: the turn, stored."""

    turn: QATurn


QAStep = Step | Answered


def thread_not_found() -> NotFound:
    return NotFound("Thread not found.")


class QAService:
    """QA turns for one caller; `keep_threads` False (QA_THREAD_RETENTION_DAYS=0) keeps no thread."""

    def __init__(
        self, runner: AgentRunner, pool: AsyncConnectionPool, graph: Graph, *, keep_threads: bool
    ) -> None:
        if runner.audit is None:
            raise ValueError("a QA turn is audited: its runner needs an Audit")
        self.runner, self.pool, self.graph, self.keep_threads = runner, pool, graph, keep_threads
        self.audit: Audit = runner.audit
        self.scope = runner.scope

    async def answer(self, ask: Ask) -> QATurn:
        ticket, thread_id, inputs = await self._prepare(ask)
        result = await self.runner.invoke(QA, self.graph, inputs, question=ask.question, ticket=ticket)
        return await self._finish(ask, result, thread_id)

    async def stream(self, ask: Ask) -> AsyncGenerator[QAStep, None]:
        """The turn's steps, after what may still fail as a plain error (a full queue, a thread that is
        not the caller's): the returned iterator reports failures as a Failed step."""
        return self._steps(ask, *await self._prepare(ask))

    async def study_next(self, ask: Ask, language: str, now: datetime) -> QATurn:
        """The caller's weakest topics, cited by the passages their next items come from
        (agents/qa/study_next.py)."""
        thread_id, _ = await self._open_thread(ask, for_graph=False)
        async with self.pool.connection() as conn:
            topics = await study.student_mastery(conn, **self.scope, now=now) or []
            reply = study_next_reply(topics, language)
            chunks = await questions.source_chunks(conn, **self.scope, chunk_ids=reply.chunk_ids)
        result = {
            "answer": reply.answer,
            "has_answer": reply.has_answer,
            "outcome": "study_plan" if reply.has_answer else "not_found",
            "citations": [citation_for(Candidate(chunk_id=c.id, row=asdict(c))) for c in chunks],
            "language": language,
        }
        return await self._finish(ask, result, thread_id)

    async def _prepare(self, ask: Ask) -> tuple[Ticket, UUID | None, QAInput]:
        # A place in the model's queue first: a full queue is a plain refusal, before anything is written.
        ticket = await self.runner.reserve()
        try:
            return ticket, *await self._open_thread(ask)
        except BaseException:
            await ticket.release()
            raise

    async def _steps(
        self, ask: Ask, ticket: Ticket, thread_id: UUID | None, inputs: QAInput
    ) -> AsyncGenerator[QAStep, None]:
        result: dict[str, Any] | None = None
        sent_tokens = False
        run = self.runner.stream(QA, self.graph, inputs, question=ask.question, ticket=ticket)
        async with aclosing(run) as steps:
            async for step in steps:
                if isinstance(step, Finished):
                    result = step.result
                    continue
                sent_tokens = sent_tokens or isinstance(step, Token)
                yield step
        if result is None:  # the run failed, and its Failed step said so
            return
        if not sent_tokens:  # a clarification or a gate's "not found": the whole text as one token
            yield Token(result.get("answer", ""))
        try:
            turn = await self._finish(ask, result, thread_id)
        except Exception as error:  # the answer streamed, but it could not be stored: say so, never cut
            self.runner.log_failure(error, route="qa_stream")
            yield Failed(error, saving=True)
            return
        yield Answered(turn)

    async def _open_thread(self, ask: Ask, *, for_graph: bool = True) -> tuple[UUID | None, QAInput]:
        """The thread (an existing one of the caller's, or a new one; None when threads are not kept)
        and the graph's input (the project's documents only `for_graph`)."""
        history: list[Any] = []
        thread_id: UUID | None = None
        if not self.keep_threads and ask.thread_id is not None:
            raise Unprocessable(
                "Conversations are not kept on this server (QA_THREAD_RETENTION_DAYS=0):"
                " ask without thread_id."
            )
        async with self.pool.connection() as conn:
            if self.keep_threads and ask.thread_id is None:
                thread_id = (await threads.create_thread(conn, **self.scope, title=ask.question[:80])).id
            elif ask.thread_id is not None:
                if await threads.get_thread(conn, **self.scope, thread_id=ask.thread_id) is None:
                    raise thread_not_found()
                thread_id = ask.thread_id
                messages = await threads.recent_messages(
                    conn, **self.scope, thread_id=thread_id, limit=2 * DEFAULT_CONFIG.history_turns
                )
                history = history_from_messages(messages)
            docs = await documents.list_documents(conn, **self.scope) if for_graph else []
        refs: list[DocumentRef] = [{"id": str(d.id), "title": d.title, "filename": d.filename} for d in docs]
        return thread_id, {
            "question": ask.question,
            "history": history,
            "documents": refs,
            "stream": ask.stream,
        }

    async def _finish(self, ask: Ask, result: dict[str, Any], thread_id: UUID | None) -> QATurn:
        """Stores the turn (unless threads are not kept) and its history row (a sampled answer is queued
        for judging), which logs one JSON line for the request."""
        if thread_id is not None:
            async with self.pool.connection() as conn:
                await threads.add_messages(
                    conn, **self.scope, thread_id=thread_id, messages=turn_messages(ask.question, result)
                )
        context = self.runner.context
        context.timings_ms["total"] = self.audit.elapsed_ms()
        run = RunRecord(
            QA.name,
            ask.question,
            answer=result.get("answer"),
            outcome=result.get("outcome"),
            retrieved_chunk_ids=[c.chunk_id for c in result.get("retrieved", [])],
            cited_chunk_ids=[c.chunk_id for c in result.get("citations", [])],
            confidence=result.get("confidence"),
        )
        await self.runner.record(
            run,
            # Only answers are judged: "not found", declines and clarifications claim nothing to check; nor
            # a kept reply (core/llm/reply_cache.py): the same words on the same passages as one already
            # sampled or not, and judging it again would spend the model's time on nothing new.
            judge=result.get("outcome") == "answered" and "reply_cached" not in context.timings_ms,
            confidence_label=(result.get("confidence") or {}).get("label"),
            thread_id=str(thread_id) if thread_id else None,
            stream=ask.stream,
        )
        return QATurn(result, thread_id, self.audit.request_id, context.timings_ms, context.usage.by_model)
