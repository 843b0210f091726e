"""The Content Planner's one prompt: numbered topics (retrieved chunks grouped by section, one line
each), outline back as JSON. Short on purpose: the local 1.5B model reads ~100 tokens/s."""

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agents.common.prose import excerpt
from agents.planner import config
from core.retrieval import Candidate

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


def topic_line(number: int, topic: list[Candidate]) -> str:
    first = topic[0]
    header = first.context_header or " > ".join(
        [first.row.get("document_title", ""), *first.row.get("section_path", [])]
    )
    count = f"{len(topic)} excerpt{'s' if len(topic) > 1 else ''}"
    return f"[{number}] {' '.join(header.split())} ({count}): {excerpt(first.text, config.EXCERPT_CHARS)}"


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
