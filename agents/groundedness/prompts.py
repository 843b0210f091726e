"""What the judge asks the model: one claim beside one passage, yes or no."""

import re
from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel

from core.text.words import split_sentences

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def answer_sentences(answer: str, limit: int) -> list[str]:
    """The answer's sentences (list items count as sentences); past `limit`, the rest is one sentence
    so that nothing the answer says goes unchecked."""
    parts = [_BULLET.sub("", part).strip() for part in split_sentences(answer)]
    sentences = [part for part in parts if re.search(r"\w", part)]
    if len(sentences) > limit:
        sentences = [*sentences[: limit - 1], " ".join(sentences[limit - 1 :])]
    return sentences


class Entailment(BaseModel):
    verdict: Literal["yes", "no"]


ENTAILMENT_SYSTEM = (
    "You compare a claim with a passage from a source. Reply with JSON.\n"
    "verdict: yes if the passage states the claim, with the same numbers and the same direction"
    " of effect; no if it states something else, the opposite, or does not say it."
)


def entailment_messages(*, passage: str, claim: str) -> list[BaseMessage]:
    asked = f"Passage: {passage}\n\nClaim: {claim}\n\nDoes the passage state the claim?"
    return [SystemMessage(content=ENTAILMENT_SYSTEM), HumanMessage(content=asked)]
