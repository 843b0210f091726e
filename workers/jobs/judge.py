"""Jobs of the audit trail. judge_answer: the groundedness judge on one sampled QA answer, stored as
a rag_evaluations row (and LangSmith feedback when tracing is configured). purge_query_history: the
retention windows of every table holding a student's text, hourly and at worker start-up."""

import asyncio
import json
import logging
from collections.abc import Sequence
from uuid import UUID

from agents.common.context import AgentContext
from agents.groundedness import ContrastCheck, JudgeChunk, Judgement, judge_answer, judge_config
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.specs import JUDGE
from core.jobs.specs import JUDGE_ANSWER, PURGE_QUERY_HISTORY, JudgeAnswer, PurgeHistory
from core.llm.structured import TokenUsage, model_name
from core.observability.tracing import Tracing
from core.runtime import Runtime
from core.store import evaluations, history, privacy
from core.store.evaluations import Evaluation
from core.store.history import HistoryEntry
from workers.jobs.agent_runs import background_runner
from workers.jobs.framework import FunctionJob, Result

log = logging.getLogger(__name__)
# The judge reads at most this many chunks (the cited ones first, then the rest in retrieval order):
# the answer model was shown the top few, and each chunk costs ~200 tokens of prefill on a small model.
JUDGE_MAX_CHUNKS = 5


def chunks_to_judge(
    cited: Sequence[int], retrieved: Sequence[int], texts: dict[int, str]
) -> list[JudgeChunk]:
    ordered = dict.fromkeys([*cited, *retrieved])
    return [JudgeChunk(id=i, text=texts[i]) for i in ordered if i in texts][:JUDGE_MAX_CHUNKS]


async def _judge(runtime: Runtime, args: JudgeAnswer) -> Result:
    """Judges the stored answer of `query_id` against the chunks it was given. Skips when there is no
    chat model, the query is gone (retention, project deleted, asker left) or none of its chunks
    remain. A judge reply that stays malformed, or an unreachable model, fails this sample only: it is
    one of many, and retrying a 1.5B model's bad reply rarely helps."""
    llm, settings, query_id = runtime.llm, runtime.settings, args.query_id
    if llm is None:
        return _skipped(query_id, "no chat model is configured for the worker")
    if settings.retention.evaluation_days == 0:  # an evaluation would copy the student's text
        return _skipped(query_id, "EVALUATION_RETENTION_DAYS is 0: no evaluation is kept")
    scope = {"project_id": args.project_id, "user_id": args.user_id}
    async with runtime.pool.connection() as conn:
        row = await history.query_to_judge(conn, **scope, query_id=query_id)
        if row is None:
            return _skipped(query_id, "query not found")
        ids = list(dict.fromkeys([*row.cited_chunk_ids, *row.retrieved_chunk_ids]))
        texts = await evaluations.chunk_texts(conn, **scope, chunk_ids=ids)
        chunks = chunks_to_judge(row.cited_chunk_ids, row.retrieved_chunk_ids, texts)
    if not chunks:
        return _skipped(query_id, "its chunks no longer exist")
    runner = background_runner(runtime, llm, project_id=args.project_id, user_id=args.user_id)

    async def judge(admitted: AgentContext) -> Judgement:
        return await judge_answer(
            admitted.llm,
            question=row.question,
            answer=row.answer or "",
            chunks=chunks,
            mode=admitted.structured_mode,
            usage=admitted.usage,
            embeddings=runtime.embeddings,
            config=judge_config(admitted.thresholds),
            contrast=ContrastCheck(admitted.llm) if settings.groundedness.contrast_check else None,
        )

    try:
        judgement = await runner.call(JUDGE, judge, question=row.question)
    except (UnusableReply, ModelUnreachable) as error:
        cause = type(error.__cause__).__name__
        log.warning("judging %s failed: %s", query_id, cause)
        return {"status": "failed", "error": cause}
    async with runtime.pool.connection() as conn:
        stored = await evaluations.insert_evaluation(
            conn,
            **scope,
            query_id=query_id,
            claims=[claim.model_dump() for claim in judgement.claims],
            groundedness=judgement.groundedness,
            relevance=judgement.relevance,
            hallucination_risk=judgement.hallucination_risk,
            flagged=judgement.flagged,
            judge_model=model_name(llm),
        )
    if stored is None:  # judged already by an earlier try, or the query went meanwhile
        return _skipped(query_id, "already judged or gone")
    _log_judgement(stored, judgement, runner.context.usage)
    await _feedback(runtime.tracing, row, judgement)
    return {"status": "judged", "evaluation_id": str(stored.id), "flagged": judgement.flagged}


# A worker that died mid-judgement reruns it once; the evaluation is written at most once.
judge_answer_job = FunctionJob(JUDGE_ANSWER, _judge, max_tries=2)


def _skipped(query_id: UUID, reason: str) -> Result:
    log.info("judging %s skipped: %s", query_id, reason)
    return {"status": "skipped", "reason": reason}


def _log_judgement(stored: Evaluation, judgement: Judgement, usage: TokenUsage) -> None:
    """One JSON line; WARNING when flagged, so an alert can watch for it. Scores and ids only."""
    line = {
        "event": "groundedness",
        "evaluation_id": str(stored.id),
        "query_id": str(stored.query_id),
        "run_id": str(stored.run_id) if stored.run_id else None,
        "project_id": str(stored.project_id),
        "claims": len(judgement.claims),
        "unsupported": sum(not claim.supported for claim in judgement.claims),
        "groundedness": judgement.groundedness,
        "relevance": judgement.relevance,
        "hallucination_risk": judgement.hallucination_risk,
        "flagged": judgement.flagged,
        "tokens": usage.by_model,
    }
    log.log(logging.WARNING if judgement.flagged else logging.INFO, json.dumps(line))


async def _feedback(tracing: Tracing | None, row: HistoryEntry, judgement: Judgement) -> None:
    if tracing is None or row.run_id is None:
        return
    try:  # the LangSmith client blocks on the network
        await asyncio.to_thread(tracing.record_feedback, row.run_id, judgement)
    except Exception as error:  # the evaluation is stored; feedback is a copy for LangSmith
        log.warning("langsmith feedback for run %s failed: %s", row.run_id, type(error).__name__)


async def _purge(runtime: Runtime, args: PurgeHistory) -> Result:
    """The retention purge of every table holding a student's text, each with its own window:
    query history, QA threads (by last turn) with their messages, attempts, evaluations; and the
    sign-in state that can sign nobody in any more (ended sessions, spent flows, nonces, old tokens)."""
    settings = runtime.settings
    windows = {
        "query_history": (history.purge_expired, settings.retention.query_history_days),
        "qa_threads": (privacy.purge_threads, settings.retention.qa_thread_days),
        "question_attempts": (privacy.purge_attempts, settings.retention.attempt_days),
        "rag_evaluations": (privacy.purge_evaluations, settings.retention.evaluation_days),
    }
    deleted: dict[str, int] = {}
    async with runtime.pool.connection() as conn:
        for table, (purge, days) in windows.items():
            deleted[table] = await purge(conn, retention_days=days)
            if deleted[table]:
                log.info("%s: %d rows older than %d days purged", table, deleted[table], days)
        ended = await privacy.purge_sign_in_state(conn)
        for table, count in ended.items():
            if count:
                log.info("%s: %d ended rows purged", table, count)
        deleted.update(ended)
    return {
        "deleted": deleted["query_history"],
        "retention_days": settings.retention.query_history_days,
        "purged": deleted,
    }


# Hourly and once when the worker starts (workers/main.py).
purge_query_history = FunctionJob(PURGE_QUERY_HISTORY, _purge)
