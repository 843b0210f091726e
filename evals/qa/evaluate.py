"""The evaluators over saved QA records: correctness and citations (evals.qa.scoring), retrieval hit,
and optionally groundedness by the same judge the sampled-answer job uses."""

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from uuid import UUID

from langchain_core.embeddings import Embeddings
from psycopg_pool import AsyncConnectionPool

from agents.groundedness import ContrastCheck, Judgement, judge_answer
from core.llm.chat import make_chat_model
from core.observability import timing
from core.observability.tracing import Tracing
from core.runtime import ChatModelPlan
from core.runtime.services import ServiceUrls
from core.settings import Settings
from evals.qa.datasets import QACase, QADataset
from evals.qa.report import GroupFigures, figures, markdown_report, write_chart
from evals.qa.run import ChunkInfo, QARecord, chunk_info
from evals.qa.scoring import CaseScore, contains, score_case
from workers.jobs.judge import chunks_to_judge


@dataclass
class EvalOutcome:
    rows: list[GroupFigures]
    records: list[QARecord]
    judge_seconds: float | None


@dataclass(frozen=True)
class GroundednessJudge:
    """The judge as the sampled-answer job runs it: the chat model that `settings` and the stack's `urls`
    decide, and the embeddings its checks compare with (the API's own, where given)."""

    settings: Settings
    urls: ServiceUrls
    embeddings: Embeddings | None = None


async def evaluate(
    datasets: Sequence[QADataset],
    records: Sequence[QARecord],
    projects: dict[str, str],
    pool: AsyncConnectionPool,
    *,
    judge: GroundednessJudge | None = None,
    tracing: Tracing | None = None,
) -> EvalOutcome:
    """Scores each record; with a `judge`, each answer's groundedness too; with `tracing`, the scores go
    onto the traced runs."""
    cases = {case.id: (dataset, case) for dataset in datasets for case in dataset.cases}
    records = [r for r in records if r.case_id in cases]
    chunks: dict[str, dict[int, ChunkInfo]] = {}
    for dataset in datasets:
        mine = [r for r in records if cases[r.case_id][0] is dataset]
        ids = [i for r in mine for i in (*r.cited_ids, *r.retrieved_ids)]
        chunks[dataset.corpus.name] = await chunk_info(pool, projects[dataset.corpus.name], ids)
    scores: dict[str, CaseScore] = {}
    hits: dict[str, bool] = {}
    for record in records:
        dataset, case = cases[record.case_id]
        known = chunks[dataset.corpus.name]
        cited = [known[i] for i in record.cited_ids if i in known]
        # The model's answer is scored even where its confidence was too low to claim it (the
        # calibration's question is whether it was right); an absent question's reply is what counts.
        guessed = record.guess is not None and case.kind != "absent"
        scores[record.case_id] = score_case(
            case,
            answer=record.guess if guessed else record.answer,
            has_answer=record.has_answer or guessed,
            cited_files=[c.filename for c in cited],
            cited_texts=[c.text for c in cited],
        )
        if record.confidence is not None:
            record.answer_right = case.kind != "absent" and scores[record.case_id].correct
        if case.kind != "absent":
            hits[record.case_id] = any(
                _is_evidence(case, known[i]) for i in record.retrieved_ids if i in known
            )
    judgements: dict[str, Judgement] = {}
    judge_seconds = None
    if judge is not None:
        started = timing.mark()
        judgements = await judge_all(records, cases, chunks, judge)
        judge_seconds = timing.elapsed_s(started)
    judged = {i: (j.groundedness, j.flagged) for i, j in judgements.items()} if judge is not None else None
    if tracing is not None:
        await asyncio.to_thread(send_feedback, tracing, records, scores, judgements)
    groups: dict[str, list[QARecord]] = {}
    for record in records:
        dataset, case = cases[record.case_id]
        groups.setdefault(f"{dataset.corpus.name} / {case.kind}", []).append(record)
    rows = [figures(name, group, scores, hits, judged) for name, group in sorted(groups.items())]
    rows.append(figures("all", records, scores, hits, judged))
    return EvalOutcome(rows, list(records), judge_seconds)


def send_feedback(
    tracing: Tracing,
    records: Sequence[QARecord],
    scores: dict[str, CaseScore],
    judgements: dict[str, Judgement],
) -> None:
    """The evaluators' scores on each traced run, so the eval reads as an experiment in LangSmith."""
    for record in records:
        if record.run_id is None:
            continue
        run_id = UUID(record.run_id)
        score = scores[record.case_id]
        tracing.record_score(run_id, "correctness", float(score.correct), comment=record.case_id)
        if score.cited:
            tracing.record_score(run_id, "citation_precision", score.cited_on_target / score.cited)
        if record.case_id in judgements:
            tracing.record_feedback(run_id, judgements[record.case_id])
    tracing.flush()


def _is_evidence(case: QACase, chunk: ChunkInfo) -> bool:
    return chunk.filename in case.evidence_files or any(contains(chunk.text, g) for g in case.evidence_texts)


async def judge_all(
    records: Sequence[QARecord],
    cases: dict[str, tuple[QADataset, QACase]],
    chunks: dict[str, dict[int, ChunkInfo]],
    judge: GroundednessJudge,
) -> dict[str, Judgement]:
    """The judgement of each answered record, judged as the worker judges a sampled answer."""
    settings = judge.settings
    plan = ChatModelPlan.decide(settings, judge.urls)
    llm = make_chat_model(settings, base_url=plan.base_url)
    mode = plan.structured_mode
    judged: dict[str, Judgement] = {}
    for record in records:
        if not (record.has_answer or record.guess) or record.error:
            continue
        known = chunks[cases[record.case_id][0].corpus.name]
        # What the sampled-answer job reads: the cited chunks first, then the retrieved ones, at most 5.
        texts = {i: info.text for i, info in known.items()}
        given = chunks_to_judge(record.cited_ids, record.retrieved_ids, texts)
        judgement = await judge_answer(
            llm,
            question=record.question,
            answer=record.guess or record.answer,  # an unsure reply's guess is what would be checked
            chunks=given,
            mode=mode,
            embeddings=judge.embeddings,
            contrast=ContrastCheck(llm) if settings.groundedness.contrast_check else None,
        )
        judged[record.case_id] = judgement
        record.groundedness = judgement.groundedness
    return judged


def write_report(outcome: EvalOutcome, report: Path, *, command: str, settings: Settings) -> None:
    done = [r for r in outcome.records if r.error is None]
    meta = {
        "command": command,
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "chat model": settings.llm.base_url or f"embedded {settings.llm.local_model} (llama.cpp, CPU)",
        "embedding": settings.embeddings.model,
        "questions": f"{len(outcome.records)} asked, {len(done)} answered without error",
    }
    if outcome.judge_seconds is not None:
        meta["groundedness judge time"] = f"{outcome.judge_seconds:.0f} s"
    notes = [
        "accuracy: multiple choice = the option the reply names is right; short/extractive = a gold"
        " answer appears in the reply or token F1 >= 0.5; absent = the reply says not found.",
        "not found: share of replies with has_answer false (for absent questions that is the right reply).",
        "citation precision: cited chunks from the quiz's chapter file, or holding a FaQuAD gold answer,"
        " over all cited chunks. retrieval hit: such a chunk is among the chunks retrieved.",
        "first cited shown: answers whose first cited passage was among the passages shown while the model"
        " worked (the stream's `evidence` event), over the cited answers that had them.",
        "latency: whole streamed reply and time to the first token event, seen by an HTTP client.",
    ]
    text = markdown_report("RAG QA evaluation", outcome.rows, meta, notes)
    print(text)
    report.parent.mkdir(parents=True, exist_ok=True)
    report.with_suffix(".md").write_text(text)
    write_chart(outcome.rows, outcome.records, report.with_suffix(".png"), f"RAG QA: {meta['questions']}")
    print(f"wrote {report.with_suffix('.md')} and {report.with_suffix('.png')}")
