"""The contrast check: a claim the model accepted must also be more believable, beside its passage,
than the claim's opposite.

Why: a 1.5B model answers "yes" to nearly any claim on the passage's topic, including one that reports
the opposite direction of effect. Asked outright to choose between a claim and its opposite it picks
whichever comes first; but the probability it gives "yes" still ranks them: on the SciFact dev claims
(`python -m evals.groundedness_contrast --split dev`) the claim scored no more than MARGIN below its
model-written opposite for 56 of 59 accepted supported claims, but for only 11 of 20 accepted
contradicted ones.

Needs the chat endpoint's token log-probabilities (llama.cpp's server and OpenAI return them); where
the endpoint gives none, or refuses the parameter, the check abstains and the model's verdict stands."""

import logging
import math
from dataclasses import dataclass

import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from core.llm.chat import output_cap
from core.llm.structured import TokenUsage, content_text, model_name

log = logging.getLogger(__name__)

OPPOSITE_SYSTEM = (
    "Rewrite the claim so that it states the opposite finding (reverse the direction of the effect,"
    " or say there is no effect). Keep every other word. Reply with the rewritten claim only."
)
YES_NO_SYSTEM = (
    "You compare a claim with a passage from a source. Answer with one word, yes or no: yes if the"
    " passage states the claim, with the same numbers and the same direction of effect; no if it"
    " states something else, the opposite, or does not say it."
)
# Read off the SciFact dev split (`python -m evals.groundedness_contrast --split dev`; accepted claims:
# 59 supported, 20 contradicted): margin 0 kept 55 supported and caught 11 contradicted; 0.05 kept 56
# and caught 9; 0.1 kept 57 and caught 6.
MARGIN = 0.05


def yes_share(message: AIMessage) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first token's top alternatives; None without log-probs."""
    logprobs = (message.response_metadata or {}).get("logprobs") or {}
    tokens = logprobs.get("content") or []
    if not tokens:
        return None
    mass = {"yes": 0.0, "no": 0.0}
    for alternative in tokens[0].get("top_logprobs") or []:
        word = str(alternative.get("token", "")).strip().lower()
        if word in mass:
            mass[word] += math.exp(float(alternative["logprob"]))
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


@dataclass(frozen=True)
class ContrastCheck:
    llm: BaseChatModel
    margin: float = MARGIN

    async def _ask(
        self, messages: list[BaseMessage], usage: TokenUsage | None, **params: object
    ) -> AIMessage:
        reply = await self.llm.bind(**params).ainvoke(messages)
        if not isinstance(reply, AIMessage):
            raise TypeError(f"expected an AIMessage, got {type(reply).__name__}")
        if usage is not None:
            usage.add(model_name(self.llm), reply)
        return reply

    async def _yes_share(self, passage: str, claim: str, usage: TokenUsage | None) -> float | None:
        asked = f"Passage: {passage}\n\nClaim: {claim}\n\nDoes the passage state the claim?"
        messages: list[BaseMessage] = [SystemMessage(content=YES_NO_SYSTEM), HumanMessage(content=asked)]
        reply = await self._ask(messages, usage, logprobs=True, top_logprobs=10, **output_cap(self.llm, 1))
        return yes_share(reply)

    async def opposite(self, claim: str, usage: TokenUsage | None) -> str:
        messages: list[BaseMessage] = [SystemMessage(content=OPPOSITE_SYSTEM), HumanMessage(content=claim)]
        reply = await self._ask(messages, usage, **output_cap(self.llm, 160))
        return content_text(reply).strip()

    async def difference(self, passage: str, claim: str, usage: TokenUsage | None = None) -> float | None:
        """P(yes | claim) - P(yes | its opposite) beside the passage; None when the check cannot tell
        (no log-probs, an endpoint that refuses them, or no distinct opposite)."""
        try:
            claim_yes = await self._yes_share(passage, claim, usage)
            if claim_yes is None:
                return None
            opposite = await self.opposite(claim, usage)
            if not opposite or opposite.casefold() == claim.casefold():
                return None
            opposite_yes = await self._yes_share(passage, opposite, usage)
        except openai.BadRequestError as error:
            log.info("contrast check unavailable: %s", type(error).__name__)
            return None
        return None if opposite_yes is None else claim_yes - opposite_yes

    async def passes(self, passage: str, claim: str, usage: TokenUsage | None = None) -> bool | None:
        """False when the claim's opposite is clearly (by more than the margin) the likelier reading of
        the passage, True when it is not, None when the check abstains."""
        difference = await self.difference(passage, claim, usage)
        return None if difference is None else difference > -self.margin
