"""A mind map of the project's material, or of one document: its structure and key concepts, every node
leading to passages (backend/mindmap/service.py). Members read it; anyone else gets 404."""

from uuid import UUID

from fastapi import APIRouter

from backend.deps import DbDep, ProjectDep
from backend.mindmap import service
from backend.mindmap.schemas import MindMapOut

router = APIRouter(prefix="/projects/{project_id}", tags=["mind map"])


@router.get("/mindmap")
async def project_mind_map(access: ProjectDep, db: DbDep) -> MindMapOut:
    """The project's uploaded documents, their headings and the concepts linking them."""
    async with db.connection() as conn:
        found = await service.project_map(conn, access.scope, project_name=access.project.name)
    return MindMapOut.model_validate(found)


@router.get("/documents/{document_id}/mindmap")
async def document_mind_map(document_id: UUID, access: ProjectDep, db: DbDep) -> MindMapOut:
    """One document's headings and concepts; 404 for a document not in this project."""
    async with db.connection() as conn:
        found = await service.document_map(conn, access.scope, document_id=document_id)
    return MindMapOut.model_validate(found)
