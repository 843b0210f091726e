"""GET /projects/{id}/evaluations (the summary for members, the items for owners and each asker): the
listed evaluations and their summary over a time window; the groundedness sampler's rate; the worker's
audit jobs and cron."""

import random
from typing import Any

import httpx
import psycopg
import pytest

from agents.runs.audit import sample_rate, sampled
from core.jobs.specs import AGENT_QUEUE, INDEX_QUEUE
from core.runtime.services import ServiceUrls
from core.settings import Settings
from core.store.runs import evaluations, history
from tests.conftest import UserFactory, add_member, create_project
from workers.main import build_worker

Conn = psycopg.AsyncConnection[dict[str, Any]]


async def test_evaluations_summary_over_a_window(
    client: httpx.AsyncClient, db: Conn, make_user: UserFactory
) -> None:
    """Three judged queries in a fresh project, one of them two days old."""
    owner, viewer, outsider = await make_user("eval-owner"), await make_user("eval-viewer"), await make_user()
    project_id = await create_project(client, owner, name="evaluated")
    await add_member(client, owner, project_id, viewer, "viewer")
    owner_id = owner.id
    scores = [(0.9, False), (0.2, True), (0.5, False)]
    for groundedness, flagged in scores:
        query_id = await history.insert_query(
            db, project_id=project_id, user_id=owner_id, run=history.RunRecord("qa", "q", answer="a")
        )
        stored = await evaluations.insert_evaluation(
            db,
            project_id=project_id,
            user_id=owner_id,
            query_id=query_id,
            claims=[],
            groundedness=groundedness,
            relevance=1.0,
            hallucination_risk=1 - groundedness,
            flagged=flagged,
            judge_model="fake",
        )
        assert stored is not None
    await db.execute(
        "UPDATE rag_evaluations SET created_at = now() - interval '2 days'"
        " WHERE project_id = %s AND groundedness > 0.8",
        (project_id,),
    )
    url = f"/projects/{project_id}/evaluations"
    everything = (await client.get(url, headers=owner)).json()
    assert everything["summary"]["count"] == 3
    assert everything["summary"]["mean_groundedness"] == pytest.approx((0.9 + 0.2 + 0.5) / 3, abs=1e-6)
    assert everything["summary"]["flagged_share"] == pytest.approx(1 / 3)
    assert [e["groundedness"] for e in everything["evaluations"]] == pytest.approx([0.5, 0.2, 0.9])
    recent = (await client.get(url, params={"since": "2000-01-01T00:00:00Z"}, headers=owner)).json()
    assert recent["summary"]["count"] == 3
    cur = await db.execute("SELECT now() - interval '1 day' AS t")
    day_ago = (await cur.fetchone())["t"].isoformat()  # type: ignore[index]
    last_day = (await client.get(url, params={"since": day_ago}, headers=owner)).json()
    assert last_day["summary"] == {"count": 2, "mean_groundedness": pytest.approx(0.35), "flagged_share": 0.5}
    older = (await client.get(url, params={"until": day_ago}, headers=owner)).json()
    assert older["summary"]["count"] == 1 and older["evaluations"][0]["groundedness"] == pytest.approx(0.9)
    assert (
        await client.get(url, params={"since": day_ago, "until": day_ago}, headers=owner)
    ).status_code == 422
    empty = (await client.get(url, params={"until": "2000-01-01T00:00:00Z"}, headers=owner)).json()
    assert empty["summary"] == {"count": 0, "mean_groundedness": None, "flagged_share": None}
    # Other members read the summary but not the owner's questions and answers (tests/backend/
    # test_privacy.py); other users do not see the project.
    as_viewer = (await client.get(url, headers=viewer)).json()
    assert as_viewer["summary"]["count"] == 3 and as_viewer["evaluations"] == []
    assert (await client.get(url, headers=outsider)).status_code == 404
    paged = (await client.get(url, params={"limit": 1, "offset": 1}, headers=owner)).json()
    assert paged["summary"]["count"] == 3 and [e["groundedness"] for e in paged["evaluations"]] == [
        pytest.approx(0.2)
    ]


def test_sampling_rate_over_many_draws() -> None:
    rng = random.Random(1234)
    for rate in (0.15, 0.5):
        hits = sum(sampled(rate, rng) for _ in range(1000))
        assert abs(hits / 1000 - rate) < 0.04, (rate, hits)  # > 3.5 standard deviations either side
    assert all(sampled(1.0, rng) for _ in range(1000)) and not any(sampled(0.0, rng) for _ in range(1000))
    settings = Settings(_env_file=None, GROUNDEDNESS_SAMPLE_RATE=0.15)  # type: ignore[call-arg]
    assert sample_rate(None, settings) == 0.15
    assert sample_rate(0.0, settings) == 0.0


def test_worker_runs_the_judge_and_purges_hourly_and_at_start_up(
    settings: Settings, services: ServiceUrls
) -> None:
    agents = build_worker(settings, services, queue="agents")
    assert "judge_answer" in agents.functions and agents.queue_name == AGENT_QUEUE
    assert not agents.cron_jobs
    index = build_worker(settings, services, queue="index")
    assert "judge_answer" not in index.functions and index.queue_name == INDEX_QUEUE
    purge, backup = index.cron_jobs  # the backup schedule: tests/backend/test_backup.py
    assert purge.name == "purge_query_history" and purge.run_at_startup and purge.minute == 17
    assert backup.name == "scheduled_backup" and backup.run_at_startup and backup.unique
