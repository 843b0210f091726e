"""The Content Planner's one prompt: numbered topics (retrieved chunks grouped by section, one line
each), outline back as JSON. Short on purpose: the local 1.5B model reads ~100 tokens/s."""

import re

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agents.planner import config
from core.retrieval import Candidate
from core.text import sentence_ends

SYSTEM = (
    "You plan a study note from a project's course material. You get a numbered list of topics found "
    "in the material.\n"
    "Propose up to {max_sections} sections in a good teaching order, one subject per section. "
    "For each section give:\n"
    '"title" (a few words), "goal" (one sentence: what the student will learn) and '
    '"sources" (the numbers of the topics it covers; each topic in one section only).\n'
    "Use only numbers from the list. If the note needs a section that no topic covers, "
    "give it an empty sources list. {language}\n"
    'Reply with JSON only: {{"sections": [{{"title": "...", "goal": "...", "sources": [1, 2]}}]}}'
)

LANGUAGE = {
    "pt": "Write titles and goals in Portuguese.",
    "en": "Write titles and goals in English.",
    "auto": "Write titles and goals in the language of the material.",
}

_HEADING_LINE = re.compile(r"^\s*#{1,6}\s.*$", re.MULTILINE)
# HTML comments, common HTML tags (named, so Rust's `Vec<T>` survives) and mdBook directives.
_MARKUP = re.compile(
    r"<!--.*?-->|\{\{#[^}]*\}\}|</?(?:a|b|br|code|details|div|em|figcaption|figure|hr|i|img|kbd|li|Listing|ol"
    r"|p|pre|section|span|strong|sub|summary|sup|table|tbody|td|th|thead|tr|ul)\b[^>\n]*>",
    re.DOTALL | re.IGNORECASE,
)
_LINK = re.compile(r"\[([^\]\n]+)\](?:\[[^\]\n]*\]|\([^)\n]*\))")  # [text][ref] or [text](url) -> text


def plain(text: str) -> str:
    """One line of prose without the markup that costs prompt tokens and tells the model nothing."""
    return " ".join(_LINK.sub(r"\1", _MARKUP.sub(" ", " ".join(text.split()))).split())


def excerpt(text: str, limit: int = config.EXCERPT_CHARS) -> str:
    """The start of a chunk's prose: its heading lines are already in the header."""
    return shorten(plain(_HEADING_LINE.sub(" ", text)), limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut after the last whole sentence when that keeps at least half,
    else after the last whole word with an ellipsis: a model is never shown half a word to copy."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = sentence_ends(head)
    if ends and ends[-1] >= limit / 2:
        return head[: ends[-1]].strip()
    words = head[: limit - 1].rsplit(" ", 1)[0] if " " in head else head[: limit - 1]
    return words.rstrip(" ,;:") + "…"


def topic_line(number: int, topic: list[Candidate]) -> str:
    first = topic[0]
    header = first.context_header or " > ".join(
        [first.row.get("document_title", ""), *first.row.get("section_path", [])]
    )
    count = f"{len(topic)} excerpt{'s' if len(topic) > 1 else ''}"
    return f"[{number}] {' '.join(header.split())} ({count}): {excerpt(first.text)}"


def outline_messages(
    *, topic: str | None, topics: list[list[Candidate]], max_sections: int, language: str
) -> list[BaseMessage]:
    lines = "\n".join(topic_line(number, group) for number, group in enumerate(topics, start=1))
    subject = topic or "the whole project (cover its main subjects)"
    return [
        SystemMessage(
            SYSTEM.format(max_sections=max_sections, language=LANGUAGE.get(language, LANGUAGE["auto"]))
        ),
        HumanMessage(f"Note subject: {subject}\n\nTopics:\n{lines}"),
    ]
