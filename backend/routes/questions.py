"""Placeholder: filled in by the agent that owns this route."""

from fastapi import APIRouter

router = APIRouter(prefix="/projects/{project_id}", tags=["questions"])
