"""The Content Writer's prompt for one section: its title and goal, and up to five numbered sources.

The reply is a short list of key points, each naming the one source it comes from: the local 1.5B
model ignores "cite [1]" in free text, but fills a source number in every point of a schema."""

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agents.planner.prompts import excerpt
from agents.writer import config
from core.retrieval import Candidate

SYSTEM = (
    "You write one section of a study note for a student, using ONLY the numbered sources.\n"
    "Give 3 to {max_points} key points in a sensible order. Each point is one short sentence in your "
    "own words (at most 30 words, no code blocks) that states a fact from one source, with that "
    "source's number. "
    "{language}\n"
    'Reply with JSON only: {{"points": [{{"text": "...", "source": 1}}]}}'
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
    *, note_title: str, title: str, goal: str, sources: list[Candidate], language: str
) -> list[BaseMessage]:
    blocks = "\n\n".join(source_block(number, source) for number, source in enumerate(sources, start=1))
    system = SYSTEM.format(max_points=config.MAX_POINTS, language=LANGUAGE.get(language, LANGUAGE["auto"]))
    return [
        SystemMessage(system),
        HumanMessage(f"Note: {note_title}\nSection: {title}\nGoal: {goal}\n\nSources:\n{blocks}"),
    ]
