"""The shared project-scoped hybrid retriever (see retriever.py)."""

from core.retrieval.profiles import PROFILES, Profile, ProfileError
from core.retrieval.retriever import Retriever
from core.retrieval.types import Candidate, Filters, RetrievalResult, StageTimings

__all__ = [
    "PROFILES",
    "Candidate",
    "Filters",
    "Profile",
    "ProfileError",
    "RetrievalResult",
    "Retriever",
    "StageTimings",
]
