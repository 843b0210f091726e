"""An audio overview's lines checked before they are spoken (issue 42: every claim from the material): the
project's groundedness judge (agents/groundedness, as the sampled QA judge runs it) reads each line against
the passage it cites, and a line with a claim the passage does not support is dropped with that reason.
What is spoken is then what the judge found in the material; the speakers alternate again over what is
kept. Model calls: the judge's, one per claim that gets past its cosine or key-term screen."""

from collections.abc import Awaitable, Callable

from langchain_core.embeddings import Embeddings

from agents.common.context import AgentContext
from agents.groundedness import JudgeChunk, judge_answer, judge_config
from agents.writer.script import Script, SpokenLine
from core.retrieval import Candidate

UNSUPPORTED = "line {number}: the judge did not find it in its passage"


async def supported_lines(
    agent: AgentContext,
    script: Script,
    sources: list[Candidate],
    embeddings: Embeddings,
    on_line: Callable[[int, int], Awaitable[None]],
    voices: int,
) -> Script:
    """The script with the lines the judge does not find in their passages dropped; `on_line(done, total)`
    after each line."""
    texts = {source.chunk_id: source.text for source in sources}
    kept: list[SpokenLine] = []
    dropped = list(script.dropped)
    for number, line in enumerate(script.lines, start=1):
        chunks = [JudgeChunk(c.chunk_id, texts.get(c.chunk_id, "")) for c in line.citations]
        judgement = await judge_answer(
            agent.llm, question=line.text, answer=line.text, chunks=chunks, mode=agent.structured_mode,
            usage=agent.usage, embeddings=embeddings, config=judge_config(agent.thresholds),
        )  # fmt: skip
        if all(claim.supported for claim in judgement.claims):
            kept.append(line.model_copy(update={"speaker": len(kept) % voices}))
        else:
            dropped.append(UNSUPPORTED.format(number=number))
        await on_line(number, len(script.lines))
    return Script(kept, dropped, generation_ms=script.generation_ms)
