"""The graph's node for a question with options: score the options (agents/qa/choice.py), show the
chosen one at once, then why: by default the passage sentence that states it (no model call), or a
short explanation the model writes from the excerpts (QAConfig.choice_explain = "model").

Model calls are spent only where they pay: the confidence checks (the self-check, the closed-book
choice) only where the calibration kept their signals for this model (Calibration.needs). On the
development quizzes none of them separated right from wrong for the embedded 1.5B model
(evals/reports/calibration-dev.md), so there a reply is one scoring call."""

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, ValidationError

from agents.common.capped import capped
from agents.common.citations import build_citations
from agents.common.context import AgentContext
from agents.common.language import language_name
from agents.qa import prompts
from agents.qa.choice import choice_messages, combined, score_options, verify_messages, verify_options
from agents.qa.confidence import judged
from agents.qa.config import DEFAULT_CONFIG, QAConfig
from agents.qa.evidence import best_sentence
from agents.qa.nodes import leaks_instructions
from agents.qa.options import Choice, parse_choice
from agents.qa.signals import choice_self_check, choice_signals, closed_book, gate_signals, option_words
from agents.qa.state import QAState
from agents.qa.stream_json import JsonStream, int_list_field, streams_content, string_field
from core.llm.structured import StructuredOutputError, ask_structured, model_name
from core.observability import timing
from core.retrieval import Candidate
from core.text.words import term_coverage

EXPLAIN = (
    "Explain in one or two sentences in {language}, from the excerpts, why option {letter} is correct."
    " Reply with JSON. explanation: the explanation. used_chunk_ids: the bracketed numbers of the"
    " excerpts it uses."
)


class Explanation(BaseModel):
    explanation: str = Field(description="why the chosen option is correct, from the excerpts")
    used_chunk_ids: list[int] = Field(default_factory=list, description="ids of the excerpts used")


class Letter(BaseModel):
    """Where the endpoint gives no log-probabilities, the model names the letter itself."""

    letter: str = Field(description="the letter of the correct option")


async def choose(
    state: QAState, runtime: Runtime[AgentContext], *, qa: QAConfig = DEFAULT_CONFIG
) -> dict[str, Any]:
    ctx, write = runtime.context, runtime.stream_writer
    await ctx.wait_for_model(write)
    streaming = bool(state.get("stream"))
    mark = timing.mark()
    choice = parse_choice(state["plan"]["question"])
    if choice is None:  # after_gate routes only questions with options here
        raise ValueError("choose needs a question with options")
    chunks = state["retrieved"][: qa.answer_chunks]
    about = f"{choice.stem}\n" + "\n".join(choice.options)
    excerpts = prompts.excerpts_block(chunks, about, qa.choice_context_chars, qa.chunk_chars)
    by_letter = by_verdict = None
    if qa.choice_method in ("letters", "both"):
        by_letter = await score_options(
            ctx.llm, excerpts, choice, order_count=qa.choice_orders, usage=ctx.usage
        )
    if qa.choice_method in ("verify", "both"):
        by_verdict = await verify_options(ctx.llm, excerpts, choice, usage=ctx.usage)
    scored = combined(by_letter, by_verdict) if by_letter and by_verdict else by_letter or by_verdict
    index = scored.index if scored is not None else await _named_letter(ctx, excerpts, choice, qa)
    letter, option = choice.letters[index], choice.options[index]
    head = f"{letter}) {option}"
    ctx.timings_ms["choice"] = timing.elapsed_ms(mark, 1)
    self_yes = None
    needs = ctx.confidence.needs
    # After the scoring prompt, which the server has cached.
    if scored is not None and needs("choice", "self_yes"):
        scoring = choice_messages(excerpts, choice, list(range(len(choice.options))))
        self_yes = await choice_self_check(ctx.llm, scoring, letter, ctx.usage)
    if streaming:
        ctx.timings_ms["first_token"] = timing.elapsed_ms(mark, 1)
        write({"token": head})
    if qa.choice_explain == "model":
        verified = by_verdict is not None and by_letter is None
        explanation, claimed = await _explain(
            ctx, excerpts, choice, index, state["language"], qa, streaming, write, verified=verified
        )
    else:
        explanation, claimed = _quoted(chunks, choice, index, state["language"])
        if streaming and explanation:
            write({"token": f"\n\n{explanation}"})
    ctx.timings_ms["generation"] = timing.elapsed_ms(mark, 1)
    closed = None
    if scored is not None and (needs("choice", "closed_agree") or needs("choice", "closed_p")):
        closed = await closed_book(ctx.llm, choice, ctx.usage)
    signals = (
        choice_signals(
            scored,
            closed=closed,
            self_yes=self_yes,
            gate=state["gate"],
            held=option_words(choice, [c.text for c in chunks], index),
        )
        if scored is not None
        else gate_signals(state["gate"])
    )
    ctx.timings_ms["confidence"] = timing.elapsed_ms(mark, 1)
    citations, invented = build_citations(claimed, chunks)
    if not citations:  # the passage that states the chosen option best
        best = max(chunks, key=lambda c: term_coverage(option, c.text) or 0.0)
        citations, _ = build_citations([best.chunk_id], chunks)
    update = {
        "answer": f"{head}\n\n{explanation}".strip(),
        "has_answer": True,
        "citations": citations,
        "outcome": "answered",
        "selected_ids": [c.chunk_id for c in chunks],
        "claimed_ids": claimed,
        "invented_ids": invented,
        "choice": {
            "letter": letter,
            "probabilities": list(scored.probabilities) if scored else None,
            "orders": by_letter.orders if by_letter else 0,
            "method": qa.choice_method if scored else "named",
            "letters": list(by_letter.probabilities) if by_letter else None,
            "verify": list(by_verdict.probabilities) if by_verdict else None,
            "closed": list(closed.probabilities) if closed else None,
        },
    }
    return judged(
        ctx, state, update, kind="choice", signals=signals, chunks=chunks, choice=choice,
        write=write if streaming else None,
    )  # fmt: skip


QUOTED = {
    "en": "The passage it rests on: “{sentence}”",
    "pt": "O trecho em que se apoia: “{sentence}”",
}


def _quoted(chunks: list[Candidate], choice: Choice, index: int, language: str) -> tuple[str, list[int]]:
    """The sentence of the shown passages that states the chosen option best, quoted, and its chunk:
    the evidence itself rather than the model's paraphrase of it."""
    about = f"{choice.options[index]} {choice.stem}"
    (sentence, _), best = max(((best_sentence(c.text, about), c) for c in chunks), key=lambda f: f[0][1])
    if not sentence:
        return "", []
    return QUOTED.get(language, QUOTED["en"]).format(sentence=sentence), [best.chunk_id]


async def _named_letter(ctx: AgentContext, excerpts: str, choice: Choice, qa: QAConfig) -> int:
    messages = choice_messages(excerpts, choice, list(range(len(choice.options))))
    try:
        reply = await ask_structured(
            capped(ctx.llm, 16), Letter, messages, mode=ctx.structured_mode, usage=ctx.usage
        )
    except StructuredOutputError:
        return 0
    letter = reply.letter.strip().strip("()*.:").upper()[:1]
    return choice.letters.index(letter) if letter in choice.letters else 0


def _explain_messages(
    excerpts: str, choice: Choice, index: int, language: str, *, verified: bool
) -> list[BaseMessage]:
    """The scoring prompt, the model's own verdict as its reply, then the ask: everything before the
    ask shares the prefix the server has cached from scoring."""
    letter = choice.letters[index]
    scored = (
        [*verify_messages(excerpts, choice, choice.options[index]), AIMessage(content="yes")]
        if verified
        else [*choice_messages(excerpts, choice, list(range(len(choice.options)))), AIMessage(content=letter)]
    )
    return [*scored, HumanMessage(content=EXPLAIN.format(language=language_name(language), letter=letter))]


async def _explain(
    ctx: AgentContext,
    excerpts: str,
    choice: Choice,
    index: int,
    language: str,
    qa: QAConfig,
    streaming: bool,
    write: Any,
    *,
    verified: bool,
) -> tuple[str, list[int]]:
    """The explanation's text and the excerpt ids it names; ("", []) when the model gives none."""
    messages = _explain_messages(excerpts, choice, index, language, verified=verified)
    llm = capped(ctx.llm, qa.explain_max_tokens)
    if not streaming or not streams_content(ctx.structured_mode):
        try:
            reply = await ask_structured(
                llm, Explanation, messages, mode=ctx.structured_mode, usage=ctx.usage
            )
        except StructuredOutputError:
            return "", []
        text = "" if leaks_instructions(reply.explanation) else reply.explanation.strip()
        if streaming and text:
            write({"token": f"\n\n{text}"})
        return text, reply.used_chunk_ids
    stream, sent = JsonStream(llm, Explanation, messages, ctx.structured_mode), ""
    async for raw in stream:
        text = string_field(raw, "explanation") or ""
        if len(text) > len(sent) and not leaks_instructions(text):
            write({"token": ("\n\n" if not sent else "") + text[len(sent) :]})
            sent = text
    if stream.message is not None:
        ctx.usage.add(model_name(ctx.llm), stream.message)
    try:
        reply = Explanation.model_validate_json(stream.raw)
        return sent.strip(), reply.used_chunk_ids
    except ValidationError:
        return sent.strip(), int_list_field(stream.raw, "used_chunk_ids")
