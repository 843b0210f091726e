"""Agent-specific retrieval profiles: one retriever, different depths and constraints."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    top_k: int
    max_top_k: int
    needs_document: bool = False  # the evaluator grades against the question's own document
    needs_document_or_section: bool = False  # the generator works from a document or section
    prefers_section: bool = False  # the writer ranks its planned section first, without excluding others


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile("planner", top_k=18, max_top_k=20),
        Profile("writer", top_k=9, max_top_k=10, prefers_section=True),
        Profile("qa", top_k=9, max_top_k=10),
        Profile("evaluator", top_k=5, max_top_k=5, needs_document=True),
        Profile("generator", top_k=10, max_top_k=20, needs_document_or_section=True),
        Profile("search", top_k=10, max_top_k=100),
    )
}


class ProfileError(ValueError):
    """A profile asked for with arguments it cannot work with; the message says what is missing."""


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ProfileError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}") from None
