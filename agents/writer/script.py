"""The Content Writer's audio overview script: a short spoken walk through chosen material, by one
narrator or two hosts taking turns, every line resting on the passage it was written from.

One model call for the whole script (the local 1.5B model: a short prompt of at most SCRIPT_SOURCES
numbered excerpts, a reply of at most MAX_LINES lines). Each line names the number of its source, as a
note's points do (agents/writer/kinds.py); the application maps it to the chunk it showed and drops a
line whose number names none: what is spoken is only what the material says. Speakers are assigned by
the application, alternating, whatever the model thinks of who speaks."""

import re
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from agents.common.capped import capped
from agents.common.citations import Citation, citation_for
from agents.common.context import AgentContext
from agents.common.prose import excerpt, shorten
from agents.writer.prompts import LANGUAGE
from agents.writer.state import SourceNumber
from core.llm.structured import ask_structured
from core.observability import timing
from core.retrieval import Candidate

SCRIPT_SOURCES = 8  # excerpts shown to the model: ~900 prompt tokens
SOURCE_CHARS = 400
# The embedded 1.5B model wrote past a 512-token reply when asked for 8 to 16 lines of 260 characters
# (benchmarks/audio_overview.py): 6 to 10 lines of at most 200, and a reply budget that holds them.
MIN_LINES, MAX_LINES = 6, 10
LINE_CHARS = 200  # one or two spoken sentences: ~12 s of speech
SCRIPT_MAX_TOKENS = MAX_LINES * (LINE_CHARS // 3 + 16)  # the text's tokens and each line's JSON
MIN_WORDS = 3  # a shorter "line" ("Yes.", "Right!") states nothing a passage could support


class ScriptLine(BaseModel):
    text: str = Field(
        description="one or two short spoken sentences", json_schema_extra={"maxLength": LINE_CHARS}
    )
    source: SourceNumber


# The model's reply (no docstring: it would become the function's description).
class ScriptDraft(BaseModel):
    lines: list[ScriptLine] = Field(json_schema_extra={"maxItems": MAX_LINES})


class SpokenLine(BaseModel):
    speaker: int  # 0, or 1 for the second host
    text: str
    citations: list[Citation]  # the passage the line rests on (ChunkRef + excerpt: the app opens it)


@dataclass
class Script:
    lines: list[SpokenLine]
    dropped: list[str] = field(default_factory=list)  # why each dropped line was dropped
    generation_ms: float = 0.0


SYSTEM = (
    "You write the script of a short spoken audio overview for a student, using ONLY the numbered"
    " sources. {cast} Write {low} to {high} lines in a sensible order. Each line is one or two short"
    " spoken sentences in your own words (no code, no lists, no symbols) that say what one source says,"
    " with that source's number. {language}\n"
    'Reply with JSON only: {{"lines": [{{"text": "...", "source": 1}}]}}'
)
CAST = {
    1: "One narrator speaks every line.",
    2: "Two hosts take turns, one line each; the second may ask about a point, but every line still"
    " states something a source says.",
}


def source_block(number: int, candidate: Candidate) -> str:
    header = " ".join(candidate.context_header.split())
    return f"[{number}] {header}\n{excerpt(candidate.text, SOURCE_CHARS)}"


def script_messages(*, title: str, sources: list[Candidate], language: str, voices: int) -> list[BaseMessage]:
    blocks = "\n\n".join(source_block(n, source) for n, source in enumerate(sources, start=1))
    system = SYSTEM.format(
        cast=CAST[voices], low=MIN_LINES, high=MAX_LINES, language=LANGUAGE.get(language, LANGUAGE["auto"])
    )
    return [SystemMessage(system), HumanMessage(f"Overview of: {title}\n\nSources:\n{blocks}")]


# What a listener should not hear: citation labels, Markdown emphasis and code marks, links' addresses.
_LABEL = re.compile(r"\[\^?\s*(?:sources?\s*:?\s*)?\d+(?:\s*[,;]\s*\d+)*\s*\]", re.IGNORECASE)
_URL = re.compile(r"https?://\S+?(?=[.,;:!?)]*(?:\s|$))")  # its trailing punctuation is the sentence's
_MARKS = re.compile(r"[*_`#>|~]+")


def spoken_text(text: str) -> str:
    """The line as it is said: labels, links and markup out, whitespace collapsed, cut to LINE_CHARS."""
    said = " ".join(_MARKS.sub(" ", _URL.sub(" ", _LABEL.sub(" ", text))).split())
    said = re.sub(r"\s+([,.;:!?])", r"\1", said)
    return shorten(said, LINE_CHARS)


def script_lines(draft: ScriptDraft, sources: list[Candidate], voices: int) -> Script:
    """The lines that name a source shown to the model, each with that passage as its citation, the
    speakers alternating over the kept lines; every other line dropped with the reason."""
    by_chunk_id = {source.chunk_id: source for source in sources}
    kept: list[SpokenLine] = []
    dropped: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(draft.lines[:MAX_LINES], start=1):
        text = spoken_text(line.text)
        if 1 <= line.source <= len(sources):
            source: Candidate | None = sources[line.source - 1]
        else:  # a number equal to a shown chunk's id is that chunk (as graph.map_citations reads it)
            source = by_chunk_id.get(line.source)
        if source is None:
            dropped.append(f"line {number}: source {line.source} names no passage shown")
        elif len(text.split()) < MIN_WORDS:
            dropped.append(f"line {number}: too short to state anything")
        elif text.casefold() in seen:
            dropped.append(f"line {number}: repeats an earlier line")
        else:
            seen.add(text.casefold())
            kept.append(SpokenLine(speaker=len(kept) % voices, text=text, citations=[citation_for(source)]))
    return Script(kept, dropped)


async def write_script(ctx: AgentContext, *, title: str, sources: list[Candidate], voices: int) -> Script:
    """The script of an overview of `sources` (at most SCRIPT_SOURCES are shown), in the context's
    language, for one or two voices."""
    shown = sources[:SCRIPT_SOURCES]
    messages = script_messages(title=title, sources=shown, language=ctx.language, voices=voices)
    started = timing.mark()
    llm = capped(ctx.llm, SCRIPT_MAX_TOKENS)
    draft = await ask_structured(llm, ScriptDraft, messages, mode=ctx.structured_mode, usage=ctx.usage)
    script = script_lines(draft, shown, voices)
    script.generation_ms = timing.elapsed_ms(started, 1)
    ctx.timings_ms["script"] = script.generation_ms
    return script
