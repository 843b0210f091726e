"""GET /admin/workers: every worker process of the last day, one by one (administrators only; the
admin screen lists them). A process killed without a word shows as "dead" within three beats
(core/store/runs/workers.py)."""

from datetime import datetime
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from backend.deps import AdminDep, DbDep, SettingsDep
from core.store.runs.workers import worker_processes

router = APIRouter(prefix="/admin", tags=["administration"])


class WorkerOut(BaseModel):
    host: str
    pid: int
    queues: list[str]
    status: Literal["running", "stopped", "dead"]
    started_at: datetime
    last_beat_at: datetime


@router.get("/workers")
async def list_workers(admin_user: AdminDep, db: DbDep, settings: SettingsDep) -> list[WorkerOut]:
    """Running first, then dead and stopped ones; newest first within each."""
    async with db.connection() as conn:
        found = await worker_processes(conn, beat_s=settings.workers.beat_s)
    order = {"running": 0, "dead": 1, "stopped": 2}
    return [
        WorkerOut.model_validate(w, from_attributes=True)
        for w in sorted(found, key=lambda w: order[w.status])
    ]
