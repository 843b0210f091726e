"""The Content Writer's prompt for one section: its title and goal, and up to five numbered sources.

The reply is a short list of entries (key points, concepts, questions or terms: agents/writer/kinds.py),
each naming the one source it comes from: the local 1.5B model ignores "cite [1]" in free text, but
fills a source number in every entry of a schema."""

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agents.common.prose import excerpt
from agents.writer import config
from agents.writer.kinds import SPECS, Kind
from core.retrieval import Candidate

SYSTEM = (
    "You write one section of a {noun} for a student, using ONLY the numbered sources.\n"
    "{asks} {language}\n"
    "Reply with JSON only: {reply}"
)

LANGUAGE = {
    "pt": "Write in Portuguese.",
    "en": "Write in English.",
    "auto": "Write in the language of the sources.",
}


def source_block(number: int, candidate: Candidate) -> str:
    header = " ".join(candidate.context_header.split())
    return f"[{number}] {header}\n{excerpt(candidate.text, config.SOURCE_CHARS)}"


def section_messages(
    *, note_title: str, title: str, goal: str, sources: list[Candidate], language: str, kind: Kind = "note"
) -> list[BaseMessage]:
    blocks = "\n\n".join(source_block(number, source) for number, source in enumerate(sources, start=1))
    spec = SPECS[kind]
    system = SYSTEM.format(
        noun=spec.noun, asks=spec.asks, reply=spec.reply, language=LANGUAGE.get(language, LANGUAGE["auto"])
    )
    return [
        SystemMessage(system),
        HumanMessage(f"Note: {note_title}\nSection: {title}\nGoal: {goal}\n\nSources:\n{blocks}"),
    ]
