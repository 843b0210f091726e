"""A Content Planner outline for the API, answered at once: planned, stored as a plan, audited."""

from typing import cast

from psycopg_pool import AsyncConnectionPool

from agents.planner.graph import graph as planner_graph
from agents.planner.graph import planner_input
from agents.planner.state import PlannerOutput, outline_document
from agents.runs.errors import Forbidden
from agents.runs.service import AgentRunner
from agents.runs.specs import PLANNER
from core.store.runs import plans
from core.store.runs.history import RunRecord
from core.store.runs.plans import Plan


def viewer_forbidden() -> Forbidden:
    return Forbidden("Viewers cannot change this project.")


async def plan(
    runner: AgentRunner, pool: AsyncConnectionPool, *, topic: str | None, max_sections: int
) -> Plan:
    """The stored plan: an outline of sections, each with its supporting chunks and a coverage figure,
    and the gaps. Without a topic the project's titles and headings are planned."""
    scope = runner.scope
    headings: list[str] = []
    if not topic:
        async with pool.connection() as conn:
            headings = await plans.project_headings(conn, **scope)
    planned = planner_input(topic, headings, max_sections)
    # An empty question in the history is a plan of the whole project (its query is made of headings).
    output = await runner.invoke(PLANNER, planner_graph, planned, question=topic or "")
    async with pool.connection() as conn:
        row = await plans.create_plan(
            conn,
            **scope,
            topic=topic,
            outline=outline_document(planned["query"], cast(PlannerOutput, output)),
        )
    if row is None:
        raise viewer_forbidden()
    run = RunRecord(
        PLANNER.name,
        topic or "",
        answer="\n".join(section.title for section in output["sections"]),
        outcome="planned",
        retrieved_chunk_ids=[c.chunk_id for c in output["retrieved"]],
        cited_chunk_ids=list(dict.fromkeys(i for section in output["sections"] for i in section.chunk_ids)),
    )
    await runner.record(
        run,
        plan_id=str(row.id),
        sections=len(output["sections"]),
        gaps=len(output["gaps"]),
    )
    return row
