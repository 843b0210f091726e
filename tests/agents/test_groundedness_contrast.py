"""The judge's contrast check with a scripted fake chat model that returns token log-probabilities as
llama.cpp's server and OpenAI do: a claim the model accepted is rejected when its opposite is clearly
more likely beside the passage, kept otherwise, and the check abstains when the endpoint gives no
log-probabilities."""

import math

from langchain_core.messages import AIMessage

from agents.common.contrast import MARGIN, yes_share
from agents.groundedness import ContrastCheck, judge_answer
from core.llm.structured import TokenUsage
from tests.agents.test_groundedness import CHUNKS, QUESTION, YES, RecordingFake

CLAIM = "Each value has one owner at a time."
OPPOSITE = "Each value has several owners at a time."


def scored(p_yes: float, *, first: str = "yes") -> AIMessage:
    """A one-token reply whose top alternatives give 'yes' the share p_yes of the yes/no mass."""
    top = [
        {"token": first, "logprob": math.log(p_yes)},
        {"token": " No", "logprob": math.log(1 - p_yes)},
        {"token": "Maybe", "logprob": math.log(0.01)},
    ]
    return AIMessage(
        content=first,
        response_metadata={"logprobs": {"content": [{"token": first, "logprob": 0.0, "top_logprobs": top}]}},
    )


async def judge_with_contrast(
    *replies: AIMessage, usage: TokenUsage | None = None
) -> tuple[bool, RecordingFake]:
    llm = RecordingFake(responses=list(replies))
    judgement = await judge_answer(
        llm,
        question=QUESTION,
        answer=CLAIM,
        chunks=CHUNKS,
        mode="llama-grammar",
        usage=usage,
        contrast=ContrastCheck(llm),
    )
    [verdict] = judgement.claims
    return verdict.supported, llm


def test_yes_share_reads_the_first_tokens_alternatives() -> None:
    assert abs(yes_share(scored(0.8)) - 0.8) < 1e-9
    assert abs(yes_share(scored(0.3, first=" Yes")) - 0.3) < 1e-9  # case and spacing do not matter
    assert yes_share(AIMessage(content="yes")) is None


async def test_a_claim_whose_opposite_is_clearly_more_likely_is_unsupported() -> None:
    usage = TokenUsage()
    supported, llm = await judge_with_contrast(
        YES, scored(0.55), AIMessage(content=OPPOSITE), scored(0.9), usage=usage
    )
    assert not supported
    _, claim_prompt, opposite_prompt, opposite_scored = (p[-1].content for p in llm.prompts)
    assert f"Claim: {CLAIM}" in claim_prompt and "There can only be one owner" in claim_prompt
    assert opposite_prompt == CLAIM  # the model is asked to reverse the claim itself
    assert f"Claim: {OPPOSITE}" in opposite_scored and "There can only be one owner" in opposite_scored
    assert sum(entry["calls"] for entry in usage.by_model.values()) == 4


async def test_a_claim_at_least_as_likely_as_its_opposite_stays_supported() -> None:
    supported, _ = await judge_with_contrast(YES, scored(0.8), AIMessage(content=OPPOSITE), scored(0.3))
    assert supported
    # Within the margin still counts: the check only overturns a clear preference for the opposite.
    within = 0.6 + MARGIN / 2
    supported, _ = await judge_with_contrast(YES, scored(0.6), AIMessage(content=OPPOSITE), scored(within))
    assert supported


async def test_a_claim_the_model_rejects_is_not_contrasted() -> None:
    supported, llm = await judge_with_contrast(AIMessage(content='{"verdict": "no"}'))
    assert not supported and len(llm.prompts) == 1


async def test_without_log_probabilities_the_check_abstains() -> None:
    supported, llm = await judge_with_contrast(YES, AIMessage(content="yes"))
    assert supported and len(llm.prompts) == 2  # no opposite is written when it could not be scored


async def test_an_opposite_that_repeats_the_claim_decides_nothing() -> None:
    supported, llm = await judge_with_contrast(YES, scored(0.5), AIMessage(content=CLAIM.upper()))
    assert supported and len(llm.prompts) == 3
