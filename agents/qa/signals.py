"""The cheap signals an answer's confidence is computed from (core/confidence): what the pipeline
already has (the gate's retrieval scores, the option scorers' probabilities, the answer's word
support) and two one-token checks that reuse the prompt the server has just cached:

- self-check: after the model's own answer, "is it stated in the excerpts? yes/no" — P(yes) costs the
  prefill of the answer and the ask only, since the excerpts are the cached prefix;
- closed book: the options scored again with no excerpts (a short prompt): an open-book choice the
  model also makes from its own knowledge is likelier right than one the excerpts talked it into.

Each signal is a float (booleans as 0/1) under a fixed name; a signal that could not be read (an
endpoint without log-probabilities) is absent, and the calibration fills it with its mean."""

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agents.common.one_token import yes_probability
from agents.qa.choice import Scored, score_options
from agents.qa.options import Choice
from core.llm.structured import TokenUsage
from core.text.words import split_sentences, term_coverage

CHOICE_CHECK = (
    "Do the excerpts clearly state that option {letter} is the correct answer? Answer with one word,"
    " yes or no."
)
ANSWER_CHECK = "Is every claim of that answer stated in the excerpts? Answer with one word, yes or no."


async def choice_self_check(
    llm: BaseChatModel, scoring: list[BaseMessage], letter: str, usage: TokenUsage | None
) -> float | None:
    """P(yes) that the excerpts state the chosen option, asked after the scoring prompt (cached)."""
    asked = [*scoring, AIMessage(content=letter), HumanMessage(content=CHOICE_CHECK.format(letter=letter))]
    return await yes_probability(llm, asked, usage)


async def answer_self_check(
    llm: BaseChatModel, prompt: list[BaseMessage], reply_json: str, usage: TokenUsage | None
) -> float | None:
    """P(yes) that the excerpts state every claim of the answer, asked after the answer's own prompt
    and reply (both cached by the server as it generated the reply)."""
    asked = [*prompt, AIMessage(content=reply_json), HumanMessage(content=ANSWER_CHECK)]
    return await yes_probability(llm, asked, usage)


async def closed_book(
    llm: BaseChatModel, choice: Choice, usage: TokenUsage | None, *, order_count: int = 2
) -> Scored | None:
    """The options scored without excerpts: what the model would choose from its own knowledge."""
    return await score_options(llm, "", choice, order_count=order_count, usage=usage)


def field_logprobs(message: AIMessage | None, raw: str, field: str) -> dict[str, float]:
    """The mean and the lowest log-probability of the tokens that wrote a JSON string field's value
    (the answer's own words, not the JSON around them): how sure the model was of each word it wrote.
    Empty where the endpoint gave no log-probabilities."""
    content = ((message.response_metadata or {}).get("logprobs") or {}).get("content") if message else None
    match = re.search(rf'"{re.escape(field)}"\s*:\s*"', raw)
    if not content or match is None:
        return {}
    end = raw.find('"', match.end())
    while end > 0 and raw[end - 1] == "\\":
        end = raw.find('"', end + 1)
    start, end = match.end(), end if end > 0 else len(raw)
    offset, inside = 0, []
    for token in content:
        text = str(token.get("token", ""))
        if start <= offset < end and text.strip():
            inside.append(float(token["logprob"]))
        offset += len(text)
    if not inside:
        return {}
    return {"answer_logprob_mean": sum(inside) / len(inside), "answer_logprob_min": min(inside)}


def gate_signals(gate: dict[str, Any]) -> dict[str, float]:
    return {
        "best_dense": float(gate.get("best_dense") or 0.0),
        "coverage": float(gate.get("coverage") or 0.0),
    }


def source_fit(text: str, question: str, passages: list[str]) -> float:
    """Share of the question's words in the passage sentence `text` most comes from, with its
    neighbours. The 1.5B model's confident wrong answers are often copied from a sentence about
    something else (on 60 FaQuAD train questions this separated right from wrong answers at AUROC ~0.75,
    where its own token log-probabilities and self-check stayed near 0.55)."""
    sentences = [piece for passage in passages for piece in split_sentences(" ".join(passage.split()))]
    if not sentences:
        return 0.0
    best = max(range(len(sentences)), key=lambda i: term_coverage(text, sentences[i]) or 0.0)
    return term_coverage(question, " ".join(sentences[max(0, best - 1) : best + 2])) or 0.0


def option_words(choice: Choice, texts: list[str], chosen: int) -> dict[str, float]:
    """How much of the chosen option's wording a shown passage holds, its lead over the best-held other
    option (a quiz's key often restates the book, its distractors do not), and whether the sentence it
    comes from is about the question's stem."""
    held = [
        max((term_coverage(option, text) or 0.0 for text in texts), default=0.0) for option in choice.options
    ]
    others = held[:chosen] + held[chosen + 1 :]
    return {
        "option_held": held[chosen],
        "option_held_lead": held[chosen] - max(others, default=0.0),
        "stem_in_source": source_fit(choice.options[chosen], choice.stem, texts),
    }


def choice_signals(
    scored: Scored,
    *,
    closed: Scored | None,
    self_yes: float | None,
    gate: dict[str, Any],
    held: dict[str, float],
) -> dict[str, float]:
    """The option scorers' agreement and margins, for the option `scored` chose."""
    ranked = sorted(scored.probabilities, reverse=True)
    signals = (
        gate_signals(gate)
        | held
        | {
            "p_top": ranked[0],
            "margin": ranked[0] - (ranked[1] if len(ranked) > 1 else 0.0),
            "options": float(len(ranked)),
        }
    )
    if len(scored.per_order) > 1:
        picks = {_argmax(p) for p in scored.per_order}
        signals["orders_agree"] = float(len(picks) == 1)
        signals["p_order_min"] = min(p[scored.index] for p in scored.per_order)
    if closed is not None:
        signals["closed_agree"] = float(closed.index == scored.index)
        signals["closed_p"] = closed.probabilities[scored.index]
    if self_yes is not None:
        signals["self_yes"] = self_yes
    return signals


def answer_signals(
    *,
    question_in_source: float,
    logprobs: dict[str, float],
    support: float | None,
    self_yes: float | None,
    cited: int,
    invented: int,
    answer_words: int,
    gate: dict[str, Any],
) -> dict[str, float]:
    """A free answer's evidence: how much of it the excerpts hold, and how the model itself rates it."""
    signals = (
        gate_signals(gate)
        | logprobs
        | {
            "cited": float(cited),
            "invented": float(invented > 0),
            "answer_words": float(answer_words),
            "question_in_source": question_in_source,
        }
    )
    if support is not None:
        signals["support"] = support
    if self_yes is not None:
        signals["self_yes"] = self_yes
    return signals


def _argmax(values: tuple[float, ...]) -> int:
    return max(range(len(values)), key=lambda i: (values[i], -i))
