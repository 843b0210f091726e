"""Jobs of the audit trail. judge_answer: the groundedness judge on one sampled QA answer, stored as
a rag_evaluations row (and LangSmith feedback when tracing is configured), in its jobs row's lifecycle
(migration 0019), so a killed worker's or a lost queue's judgement runs again. purge_query_history: the
retention windows of every table holding a student's text, hourly and at worker start-up."""

import asyncio
import json
import logging
from collections.abc import Sequence
from typing import Any
from uuid import UUID

from psycopg import AsyncConnection

from agents.common.context import AgentContext
from agents.groundedness import ContrastCheck, JudgeChunk, Judgement, judge_answer, judge_config
from agents.runs.errors import ModelUnreachable, UnusableReply
from agents.runs.specs import JUDGE
from core.jobs.specs import JUDGE_ANSWER, PURGE_QUERY_HISTORY, JudgeAnswer, PurgeHistory
from core.llm.structured import TokenUsage, model_name
from core.observability.tracing import Tracing
from core.runtime import Runtime
from core.settings import Settings
from core.store.accounts import privacy
from core.store.runs import agent_jobs, evaluations, history
from core.store.runs.evaluations import Evaluation
from core.store.runs.history import HistoryEntry
from workers.jobs.agent_runs import background_runner
from workers.jobs.framework import Failure, FunctionJob, JobAbandoned, Result, TrackedJob

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
    """Judges the stored answer of `query_id` against the chunks it was given. Skips when the query is
    gone (retention, project deleted, asker left) or none of its chunks remain; a worker without a chat
    model fails the job (a misconfiguration, not a verdict: a failed row may run again). A judge reply
    that stays malformed, or an unreachable model, fails this sample only: it is one of many, and
    retrying a 1.5B model's bad reply rarely helps."""
    llm, settings, query_id = runtime.llm, runtime.settings, args.query_id
    if llm is None:
        raise JobAbandoned(
            "No chat model is configured for the worker: set LLM_BASE_URL, or run `studyai up`."
        )
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
    runner = await background_runner(runtime, llm, project_id=args.project_id, user_id=args.user_id)

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
    except (UnusableReply, ModelUnreachable) as error:  # fails this sample only (JudgeAnswerJob)
        log.warning("judging %s failed: %s", query_id, type(error.__cause__).__name__)
        raise
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


class JudgeAnswerJob(TrackedJob[JudgeAnswer]):
    """The judgement in its jobs row (id `judge:{query_id}`, created with the sampled query_history row
    by agents/runs/audit.py): queued, running, then succeeded (judged, or skipped with the reason in its
    result) or failed with the reason; a killed worker's judgement reruns, up to JOB_MAX_DEATHS."""

    spec = JUDGE_ANSWER
    timeout_reason = "The judgement took longer than {limit_s:g} s and was stopped."
    died_reason = "The worker died while judging this answer, every time it was tried."

    def time_limit_s(self, settings: Settings) -> float:
        return settings.workers.note_job_timeout_s  # model-bound on the agents queue, like a note

    async def start(self, conn: AsyncConnection[Any], args: JudgeAnswer) -> int | Result:
        job_id = self.spec.job_id(args)
        # A judgement queued before migration 0019 has no row: it gets one now, while its query is there
        # and its asker a member (no-op for every later one), and runs in the same lifecycle.
        scope = {"project_id": args.project_id, "user_id": args.user_id}
        await agent_jobs.record_judge_job(conn, **scope, query_id=args.query_id, job_id=job_id)
        deaths = await agent_jobs.start_agent_job(
            conn, project_id=args.project_id, job_id=job_id, rerun_succeeded=False
        )
        if deaths is None:  # judged already (arq ran it again), or the query went with its row
            return _skipped(args.query_id, "already judged or gone")
        return deaths

    def known_failure(self, error: Exception) -> Failure | None:
        if isinstance(error, UnusableReply | ModelUnreachable):
            # One sample of many: retrying a small model's bad reply rarely helps, so it fails as it is.
            cause = type(error.__cause__).__name__
            return Failure(f"The judge model failed ({cause}); this answer stays unjudged.", cause)
        return None

    def unforeseen_failure(self, error: Exception) -> Failure:
        return Failure(f"The answer could not be judged ({type(error).__name__}).")

    async def run(self, runtime: Runtime, args: JudgeAnswer) -> Result:
        result = await _judge(runtime, args)
        # After the evaluation's own commit: a worker that dies in between reruns the job, which finds the
        # evaluation stored (one per query) and ends `succeeded` as skipped.
        async with runtime.pool.connection() as conn:
            await agent_jobs.finish_agent_job(
                conn, project_id=args.project_id, job_id=self.spec.job_id(args), result=result
            )
        return result


judge_answer_job = JudgeAnswerJob()


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
    query history, QA threads (by last turn) with their messages, attempts, evaluations, the judge and
    optimize jobs rows (the history's window); and the sign-in state that can sign nobody in any more
    (ended sessions, spent flows, nonces, old tokens)."""
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
        # Judge rows of purged queries went with them (ON DELETE CASCADE); finished judge and optimize
        # rows are kept as long as the history they account for.
        days = settings.retention.query_history_days
        deleted["agent_jobs"] = await agent_jobs.purge_agent_jobs(conn, retention_days=days)
        if deleted["agent_jobs"]:
            log.info("jobs: %d judge/optimize rows purged", deleted["agent_jobs"])
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
