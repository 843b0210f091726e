"""Job status: stage, progress and the reason when it failed."""

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, status

from backend.deps import DbDep, ProjectDep
from backend.documents.schemas import JobOut
from core.messages import Text
from core.store.runs import jobs

router = APIRouter(prefix="/projects/{project_id}/jobs", tags=["jobs"])


@router.get("/{job_id}")
async def get_job(job_id: Annotated[str, Path(max_length=200)], access: ProjectDep, db: DbDep) -> JobOut:
    async with db.connection() as conn:
        row = await jobs.get_job(conn, **access.scope, job_id=job_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, Text("job.not_found"))
    return JobOut.model_validate(row)
