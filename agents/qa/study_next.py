""" "What should I study next?" answered from the asker's own mastery (core/study), not by the model.

The answer is the student's weakest topics with their mastery and the items to study next in each, cited
by the passages those items come from. A question about the material that happens to mention studying
("what should I study about ownership?") names a subject and goes to the RAG QA as usual."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

TOPICS_SHOWN = 3

_ASKS = {
    "en": re.compile(
        r"^\W*(?:so\s+|and\s+|ok(?:ay)?\W+)?"
        r"(?:what|which\s+(?:topics?|parts?|chapters?|sections?))\s+(?:should|shall|do|must|can)\s+i\s+(?:(?:need|have)\s+to\s+)?"
        r"(?:study|review|revise|learn|work\s+on|focus\s+on|practi[cs]e)(?:\s+(?:next|now|today|first))?"
        r"(?:\s+(?:for|before)\s+(?:the|my)\s+(?:exam|test))?\W*$",
        re.IGNORECASE,
    ),
    "pt": re.compile(
        r"^\W*(?:e\s+|então\s+)?(?:o\s+que|que\s+(?:tópicos?|partes?|capítulos?|seções?))\s+(?:eu\s+)?"
        r"(?:devo|preciso|tenho\s+que|posso)\s+(?:estudar|revisar|rever|praticar)"
        r"(?:\s+(?:agora|hoje|primeiro|a\s+seguir|em\s+seguida))?"
        r"(?:\s+(?:para|antes\s+d[aoe])\s+(?:a\s+|o\s+)?(?:prova|exame|teste))?\W*$",
        re.IGNORECASE,
    ),
}


def asks_what_to_study(question: str) -> str | None:
    """The language of a question that asks what to study next ("en", "pt"), else None."""
    text = " ".join(question.split())
    return next((language for language, pattern in _ASKS.items() if pattern.match(text)), None)


@dataclass(frozen=True)
class StudyNext:
    answer: str
    chunk_ids: list[int]  # the passages the listed items come from, in the order shown
    has_answer: bool


_TEXT = {
    "en": {
        "intro": "From your own study record (mastery per topic, weakest first):",
        "line": "{n}. {topic}: mastery {mastery:.0%}"
        " ({studied} of {items} items studied, {attempts} graded attempts)",
        "next": "   Next: {items}",
        "outro": "Review them in your study queue.",
        "nothing": "There is nothing to study in this project yet: no approved flashcards or questions.",
    },
    "pt": {
        "intro": "Pelo seu próprio histórico de estudo (domínio por tópico, do mais fraco ao mais forte):",
        "line": "{n}. {topic}: domínio {mastery:.0%}"
        " ({studied} de {items} itens estudados, {attempts} tentativas avaliadas)",
        "next": "   A seguir: {items}",
        "outro": "Revise-os na sua fila de estudo.",
        "nothing": "Ainda não há o que estudar neste projeto: nenhum flashcard ou questão aprovada.",
    },
}


def study_next_reply(topics: Sequence[dict[str, Any]], language: str) -> StudyNext:
    """`topics` as core.study.topics.student_topics gives them (weakest first), each next item with its
    `source_chunk_ids`."""
    text = _TEXT["pt" if language == "pt" else "en"]
    if not topics:
        return StudyNext(text["nothing"], [], has_answer=False)
    lines, chunk_ids = [text["intro"]], []
    for n, topic in enumerate(topics[:TOPICS_SHOWN], start=1):
        name = " › ".join(topic["topic"]) or "—"
        counts = {key: topic[key] for key in ("mastery", "studied", "items", "attempts")}
        lines.append(text["line"].format(n=n, topic=name, **counts))
        items = topic["next_items"]
        if items:
            lines.append(text["next"].format(items="; ".join(f"“{item['question']}”" for item in items)))
        for item in items:
            chunk_ids += [c for c in item.get("source_chunk_ids", [])[:1] if c not in chunk_ids]
    lines.append(text["outro"])
    return StudyNext("\n".join(lines), chunk_ids, has_answer=True)
