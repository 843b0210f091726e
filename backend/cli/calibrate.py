"""`studyai calibrate`'s second part: the answers' confidence refitted on a project's approved items
(agents/runs/calibration.py) for the chat and embedding model this server runs, in-process with the
same retriever and QA graph as the API (no queue: the command has the model to itself)."""

import asyncio
from dataclasses import replace
from uuid import UUID

import psycopg

from agents.common.context import AgentContext
from agents.qa import build_graph, qa_config
from agents.runs.calibration import approved_items, labelled_replies
from core.confidence import Calibration, chat_model_key, uncalibrated
from core.confidence.fit import fit_calibration
from core.embeddings.models import make_embeddings
from core.embeddings.thresholds import thresholds_for
from core.llm.chat import make_chat_model
from core.runtime import ChatModelPlan, make_retriever
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.runs.calibrations import store_calibration
from core.store.sql.pool import open_pool


def store_confidence(database_url: str, calibration: Calibration) -> None:
    """Stores the calibration where every API and worker process reads it (core/confidence/source.py)."""

    async def store() -> None:
        async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
            value = calibration.as_dict() | {"source": "database"}
            await store_calibration(conn, calibration.chat_model, calibration.embedding_model, value)

    asyncio.run(store())


def refit_confidence(settings: Settings, urls: ServiceUrls, project: UUID, *, limit: int) -> Calibration:
    return asyncio.run(_refit(settings, urls, project, limit))


async def _refit(settings: Settings, urls: ServiceUrls, project: UUID, limit: int) -> Calibration:
    chat_model, embedding_model = chat_model_key(settings), settings.embeddings.model
    pool = await open_pool(urls.database_url, max_size=2)
    try:
        plan = ChatModelPlan.for_url(settings, urls.llm_base_url)
        llm = make_chat_model(settings, base_url=urls.llm_base_url)
        retriever = make_retriever(settings, pool, make_embeddings(settings))
        thresholds = thresholds_for(embedding_model, settings.services.data_dir)
        qa = qa_config(settings.qa)

        def context() -> AgentContext:  # the signals do not depend on a calibration: fit from none
            return AgentContext(
                project_id=project,
                retriever=retriever,
                llm=llm,
                structured_mode=plan.structured_mode,
                thresholds=thresholds,
                confidence=replace(uncalibrated(chat_model, embedding_model), all_signals=True),
            )

        items = await approved_items(pool, project, limit)
        samples = await labelled_replies(build_graph(qa), context, items)
    finally:
        await pool.close()
    return fit_calibration(
        samples,
        chat_model=chat_model,
        embedding_model=embedding_model,
        fitted_on=f"{len(samples)} replies to the approved items of project {project} (studyai calibrate)",
    )
