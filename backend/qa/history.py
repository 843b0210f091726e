"""The audit trail: the project's query history (owners only: it shows every member's questions) and
the sampled groundedness evaluations of its answers (the aggregates for any member; the items, which
copy a student's question and answer, for owners, and each member's own for them), over a time window.
A member may erase their own history in the project."""

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Depends, HTTPException, Query, Response, status

from backend.deps import DbDep, ProjectDep, ProjectOwnerDep
from backend.qa.history_schemas import EvaluationOut, EvaluationsOut, EvaluationSummary, QueryOut
from backend.web.paging import Page, paging
from core.messages import Text
from core.store.accounts import privacy
from core.store.runs import evaluations, history
from core.store.runs.history import AGENTS
from core.store.sql.listing import Period

router = APIRouter(prefix="/projects/{project_id}", tags=["audit"])

Since = Annotated[datetime | None, Query(description="from this time on (inclusive)")]
Until = Annotated[datetime | None, Query(description="before this time (exclusive)")]
HistoryPage = Annotated[Page, Depends(paging(default=50, most=500))]


def _period(since: datetime | None, until: datetime | None) -> Period:
    if since is not None and until is not None and since >= until:
        raise HTTPException(422, Text("history.bad_period"))
    return Period(since, until)


@router.get("/queries")
async def list_queries(
    access: ProjectOwnerDep,
    db: DbDep,
    page: HistoryPage,
    since: Since = None,
    until: Until = None,
    agent: Annotated[str | None, Query(description=f"one of {', '.join(AGENTS)}")] = None,
) -> list[QueryOut]:
    """Every member's agent requests in the retention window, newest first, each with its groundedness
    evaluation when it was sampled and judged."""
    period = _period(since, until)
    if agent is not None and agent not in AGENTS:
        raise HTTPException(422, Text("history.unknown_agent", agents=", ".join(AGENTS)))
    async with db.connection() as conn:
        rows = await history.list_queries(conn, **access.scope, period=period, agent=agent, page=page)
    return [QueryOut.model_validate(row) for row in rows]


@router.get("/evaluations")
async def list_evaluations(
    access: ProjectDep,
    db: DbDep,
    page: HistoryPage,
    since: Since = None,
    until: Until = None,
    flagged: bool | None = None,
) -> EvaluationsOut:
    """Groundedness evaluations of sampled answers, newest first, and a summary of the window over the
    whole project: how many, their mean groundedness and the share flagged (hallucination risk > 0.7).
    Owners get every member's items (`scope: project`); any other member only their own (`scope: own`):
    another student's question and answer is never shown to them."""
    period = _period(since, until)
    async with db.connection() as conn:
        rows = await evaluations.list_evaluations(
            conn, **access.scope, period=period, flagged=flagged, page=page
        )
        summary = await evaluations.summarize(conn, **access.scope, period=period)
    return EvaluationsOut(
        since=period.since,
        until=period.until,
        scope="project" if access.role == "owner" else "own",
        summary=EvaluationSummary.model_validate(summary),
        evaluations=[EvaluationOut.model_validate(row) for row in rows],
    )


@router.delete("/queries/mine", status_code=status.HTTP_204_NO_CONTENT)
async def delete_my_queries(access: ProjectDep, db: DbDep) -> Response:
    """Erases the caller's own query history in this project; the evaluations of their answers lose
    their question and answer text and their user, and stay only in the project's aggregates."""
    async with db.connection() as conn:
        await privacy.delete_own_history(conn, **access.scope)
    return Response(status_code=status.HTTP_204_NO_CONTENT)
