"""Hybrid search over one project's chunks, with the retrieval pipeline laid open on request."""

from fastapi import APIRouter, HTTPException

from backend.deps import ProjectDep, RetrieverDep
from backend.qa.search_schemas import SearchRequest, SearchResponse, to_response
from core.messages import Text
from core.retrieval import ProfileError

router = APIRouter(prefix="/projects/{project_id}", tags=["search"])


@router.post("/search")
async def search(body: SearchRequest, access: ProjectDep, retriever: RetrieverDep) -> SearchResponse:
    try:
        result = await retriever.search(
            project_id=access.id,
            user_id=access.user.id,
            query=body.query,
            profile=body.profile,
            top_k=body.top_k,
            filters=body.filters.to_filters(),
            prefer_section=body.preferred_section(),
        )
    except ProfileError as error:
        raise HTTPException(422, Text("retrieval.profile_refused", reason=str(error))) from error
    return to_response(result, debug=body.debug)
