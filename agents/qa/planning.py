"""Planning a question without the model wherever that is enough.

A standalone question is searched as the user wrote it: on the development quizzes the planner's
model call cost 25-33 s on two cores before retrieval began, and what it added (a few exact terms, a
document the user named) comes from the question's own text here. The model is asked only to
rewrite a follow-up in a thread that leans on the conversation ("and mutable ones?")."""

import re

from agents.qa.state import DocumentRef, Turn
from agents.qa.threads import leans_on_history

# Exact identifiers worth searching for verbatim: `code`, paths like std::io, calls, snake_case,
# CamelCase and macros (println!).
_CODE = re.compile(r"`([^`\n]{2,60})`")
_IDENTIFIER = re.compile(
    r"\b(?:[A-Za-z_][\w]*::[\w:]+|[a-z]+_[a-z_0-9]+|[A-Z][a-z0-9]+[A-Z]\w*|[a-z_][\w]*!|[a-z_]\w*\(\))"
)


def needs_model_plan(question: str, history: list[Turn]) -> bool:
    """Only a follow-up that leans on earlier turns needs the model (to rewrite it)."""
    return bool(history) and leans_on_history(question)


def exact_terms(question: str, limit: int = 5) -> list[str]:
    """Code and identifiers the question contains, in order, without repeats."""
    found = [m.group(1).strip() for m in _CODE.finditer(question)]
    found += [m.group(0) for m in _IDENTIFIER.finditer(question)]
    return list(dict.fromkeys(term for term in found if term))[:limit]


def named_document(question: str, documents: list[DocumentRef]) -> str | None:
    """The id of the one document the question names by its file name, or by a title of two or more
    words: a one-word title ("Strings") is too often just the topic to narrow the search by."""
    asked = question.lower()
    matches = []
    for doc in documents:
        stem = doc["filename"].rsplit(".", 1)[0].lower()
        title = doc["title"].strip().lower()
        by_file = len(stem) >= 4 and (doc["filename"].lower() in asked or stem in asked)
        by_title = len(title.split()) >= 2 and title in asked
        if by_file or by_title:
            matches.append(doc["id"])
    return matches[0] if len(matches) == 1 else None
