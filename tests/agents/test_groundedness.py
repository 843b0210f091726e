"""The groundedness judge with a scripted fake chat model: sentences as claims, the application's
scoring, the dropping of invented chunk ids, and the retry on a malformed reply."""

import json
from typing import Any

import pytest
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from agents.groundedness import RISK_FLAG_THRESHOLD, JudgeChunk, judge_answer
from agents.groundedness.prompts import answer_sentences
from core.structured import StructuredOutputError, TokenUsage

CHUNKS = [
    JudgeChunk(11, "Each value in Rust has an owner. There can only be one owner at a time."),
    JudgeChunk(12, "When the owner goes out of scope, the value will be dropped."),
]
QUESTION = "What are the ownership rules in Rust?"
ANSWER = "Each value has one owner at a time. The value is dropped when its owner goes out of scope."


class RecordingFake(FakeMessagesListChatModel):
    """Also keeps the prompts and call options (the grammar's schema) it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    options: list[dict[str, Any]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(messages)
        self.options.append(kwargs)
        return super()._generate(messages, *args, **kwargs)


QUOTES = {
    11: "There can only be one owner at a time.",
    12: "When the owner goes out of scope, the value will be dropped.",
}
YES = AIMessage(content='{"verdict": "yes"}')  # the second look confirms
NO = AIMessage(content='{"verdict": "no"}')


def check(n: int, verdict: str, excerpt: int = 0, quote: str | None = None) -> dict[str, Any]:
    quote = QUOTES.get(excerpt, "") if quote is None else quote
    return {"sentence": n, "excerpt": excerpt, "quote": quote, "verdict": verdict}


def reply(checks: list[dict[str, Any]], relevance: float = 0.9) -> AIMessage:
    return AIMessage(content=json.dumps({"checks": checks, "relevance": relevance}))


async def judge(*replies: AIMessage, answer: str = ANSWER, **kwargs: Any) -> Any:
    llm = RecordingFake(responses=list(replies))
    judgement = await judge_answer(
        llm, question=QUESTION, answer=answer, chunks=CHUNKS, mode="llama-grammar", **kwargs
    )
    return judgement, llm


async def test_all_claims_supported_is_grounded_and_not_flagged() -> None:
    judgement, llm = await judge(reply([check(1, "supported", 11), check(2, "supported", 12)]), YES, YES)
    assert judgement.groundedness == 1.0
    assert judgement.hallucination_risk == 0.0
    assert not judgement.flagged
    assert judgement.relevance == 0.9
    assert [c.claim for c in judgement.claims] == [
        "Each value has one owner at a time.",
        "The value is dropped when its owner goes out of scope.",
    ]
    assert [c.chunk_ids for c in judgement.claims] == [[11], [12]]
    # The judge saw the chunks with their ids, the question and the numbered sentences; the grammar
    # asks for exactly one check per sentence.
    prompt = llm.prompts[0][-1].content
    assert "[11] Each value in Rust has an owner." in prompt and "[12] When the owner" in prompt
    assert QUESTION in prompt
    assert "1. Each value has one owner" in prompt and "2. The value is dropped" in prompt
    schema = llm.options[0]["response_format"]["schema"]
    assert schema["properties"]["checks"]["minItems"] == schema["properties"]["checks"]["maxItems"] == 2
    # The second look compares each supported sentence with its quote alone.
    assert len(llm.prompts) == 3
    second = llm.prompts[1][-1].content
    assert "Source sentence: There can only be one owner at a time." in second
    assert "Claim: Each value has one owner at a time." in second


async def test_the_second_look_can_overturn_a_supported_verdict() -> None:
    judgement, _ = await judge(reply([check(1, "supported", 11), check(2, "supported", 12)]), YES, NO)
    assert [c.supported for c in judgement.claims] == [True, False]
    assert judgement.claims[1].chunk_ids == []


async def test_a_quote_the_chunk_does_not_contain_is_not_support() -> None:
    # The small model, short of evidence, "quotes" the claim itself.
    fake_quote = "Each value has one owner at a time."
    checks = [check(1, "supported", 11, fake_quote), check(2, "supported", 12)]
    judgement, llm = await judge(reply(checks), YES)
    assert [c.supported for c in judgement.claims] == [False, True]
    assert len(llm.prompts) == 2  # no second look for the unbacked claim


async def test_one_unsupported_claim_lowers_groundedness_without_flagging() -> None:
    judgement, _ = await judge(
        reply([check(1, "supported", 11), check(2, "supported", 12), check(3, "not_supported")]),
        YES,
        YES,
        answer=f"{ANSWER} Rust also has a garbage collector.",
    )
    assert judgement.groundedness == pytest.approx(2 / 3, abs=1e-4)
    assert judgement.hallucination_risk == pytest.approx(1 / 3, abs=1e-4)
    assert not judgement.flagged
    assert judgement.claims[2].claim == "Rust also has a garbage collector."
    assert not judgement.claims[2].supported


async def test_mostly_unsupported_answer_is_flagged() -> None:
    answer = (
        "Rust has a garbage collector. Values are reference counted by default. Ownership is checked"
        " at run time. Each value has an owner."
    )
    judgement, _ = await judge(
        reply(
            [check(1, "not_supported"), check(2, "not_supported", 12), check(3, "not_supported"),
             check(4, "supported", 11)],
            relevance=0.6,
        ),
        YES,
        answer=answer,
    )
    assert judgement.groundedness == 0.25
    assert judgement.hallucination_risk == 0.75 > RISK_FLAG_THRESHOLD
    assert judgement.flagged
    assert [c.supported for c in judgement.claims] == [False, False, False, True]


async def test_invented_chunk_ids_are_dropped_and_a_claim_left_without_one_is_unsupported() -> None:
    quote = f"[99] {QUOTES[11]}"
    judgement, _ = await judge(reply([check(1, "supported", 11, quote), check(2, "supported", 42)]), YES)
    assert [c.chunk_ids for c in judgement.claims] == [[11], []]
    assert [c.supported for c in judgement.claims] == [True, False]
    assert judgement.invented_chunk_ids == [99, 42]
    assert judgement.groundedness == 0.5


async def test_supported_without_any_citation_counts_as_unsupported() -> None:
    judgement, _ = await judge(reply([check(1, "supported"), check(2, "supported", 12)]), YES)
    assert [c.supported for c in judgement.claims] == [False, True]


async def test_an_id_cited_inside_the_quote_counts_as_a_citation() -> None:
    quote = f"[11] {QUOTES[11]}"
    judgement, _ = await judge(reply([check(1, "supported", 0, quote), check(2, "supported", 12)]), YES, YES)
    assert judgement.claims[0].supported and judgement.claims[0].chunk_ids == [11]


async def test_an_answer_without_claims_is_grounded() -> None:
    judgement, _ = await judge(
        reply([check(1, "no_claim")], relevance=0.2),
        answer="I could not find this in the project's material.",
    )
    assert judgement.claims == []
    assert judgement.groundedness == 1.0 and not judgement.flagged
    assert judgement.relevance == 0.2


async def test_an_empty_answer_is_not_sent_to_the_model() -> None:
    judgement, llm = await judge(answer="  \n ")
    assert judgement.claims == [] and judgement.groundedness == 1.0 and llm.prompts == []


async def test_relevance_given_as_a_percentage_is_scaled() -> None:
    judgement, _ = await judge(
        reply([check(1, "supported", 11), check(2, "supported", 12)], relevance=80), YES, YES
    )
    assert judgement.relevance == 0.8


async def test_malformed_reply_is_retried_once() -> None:
    usage = TokenUsage()
    judgement, llm = await judge(
        AIMessage(content='{"checks": [{"sentence": 1, "excerpt": 11'),
        reply([check(1, "supported", 11), check(2, "supported", 12)]),
        YES,
        YES,
        usage=usage,
    )
    assert judgement.groundedness == 1.0
    assert len(llm.prompts) == 4
    assert "not valid JSON" in llm.prompts[1][-1].content
    assert sum(entry["calls"] for entry in usage.by_model.values()) == 4


async def test_a_reply_with_the_wrong_number_of_checks_is_retried_then_fails() -> None:
    with pytest.raises(StructuredOutputError):
        await judge(reply([check(1, "supported", 11)]), AIMessage(content="The answer looks fine."))


def test_answer_sentences() -> None:
    assert answer_sentences("Ownership moves.\n- It is checked at compile time.\n2) No GC. ", 6) == [
        "Ownership moves.",
        "It is checked at compile time.",
        "No GC.",
    ]
    # Past the limit the rest is checked as one sentence, so nothing goes unchecked.
    assert answer_sentences("A. B. C. D.", 3) == ["A.", "B.", "C. D."]
    assert answer_sentences("Version 3.5 of it. Done", 6) == ["Version 3.5 of it.", "Done"]
