"""The groundedness judge with a scripted fake chat model: sentences as claims, the passage each is
checked against, claims decided without a model call, the application's scoring and the retry on a
malformed reply."""

import hashlib
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from agents.groundedness import RISK_FLAG_THRESHOLD, JudgeChunk, judge_answer
from agents.groundedness.evidence import best_passage, states_no_fact
from agents.groundedness.prompts import answer_sentences
from core.llm.structured import StructuredOutputError, TokenUsage

CHUNKS = [
    JudgeChunk(11, "Each value in Rust has an owner. There can only be one owner at a time."),
    JudgeChunk(
        12,
        "Rust frees memory without a garbage collector. When the owner goes out of scope, the value"
        " will be dropped.",
    ),
]
QUESTION = "What are the ownership rules in Rust?"
ANSWER = "Each value has one owner at a time. The value is dropped when its owner goes out of scope."
YES = AIMessage(content='{"verdict": "yes"}')
NO = AIMessage(content='{"verdict": "no"}')


class RecordingFake(FakeMessagesListChatModel):
    """Also keeps the prompts it was sent."""

    prompts: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.prompts.append(messages)
        return super()._generate(messages, *args, **kwargs)


async def judge(*replies: AIMessage, answer: str = ANSWER, **kwargs: Any) -> Any:
    llm = RecordingFake(responses=list(replies))
    judgement = await judge_answer(
        llm, question=QUESTION, answer=answer, chunks=CHUNKS, mode="llama-grammar", **kwargs
    )
    return judgement, llm


async def test_all_claims_supported_is_grounded_and_not_flagged() -> None:
    judgement, llm = await judge(YES, YES)
    assert [c.supported for c in judgement.claims] == [True, True]
    assert [c.chunk_ids for c in judgement.claims] == [[11], [12]]
    assert judgement.groundedness == 1.0 and judgement.hallucination_risk == 0.0 and not judgement.flagged
    # Each claim is shown beside the passage that covers it best, not beside every chunk.
    first, second = (prompt[-1].content for prompt in llm.prompts)
    assert "Claim: Each value has one owner at a time." in first and "There can only be one owner" in first
    assert "garbage collector" not in first
    assert "When the owner goes out of scope, the value will be dropped." in second
    assert judgement.relevance == pytest.approx(1 / 3, abs=1e-4)  # of ownership, rules, rust: owner


async def test_one_unsupported_claim_lowers_groundedness_without_flagging() -> None:
    judgement, _ = await judge(YES, NO)
    assert [c.supported for c in judgement.claims] == [True, False]
    assert judgement.claims[1].chunk_ids == []
    assert judgement.groundedness == 0.5 and judgement.hallucination_risk == 0.5
    assert not judgement.flagged


async def test_mostly_unsupported_answer_is_flagged() -> None:
    answer = (
        f"{ANSWER} Rust has a garbage collector that runs every second. Cargo compiles crates in parallel."
    )
    judgement, llm = await judge(NO, YES, NO, answer=answer)
    # Nothing about cargo or crates is in any chunk: unsupported without asking the model.
    assert len(llm.prompts) == 3 and len(judgement.claims) == 4
    assert [c.supported for c in judgement.claims] == [False, True, False, False]
    assert judgement.hallucination_risk == 0.75 > RISK_FLAG_THRESHOLD and judgement.flagged


async def test_a_claim_absent_from_every_chunk_is_unsupported_without_a_model_call() -> None:
    judgement, llm = await judge(answer="Kubernetes schedules pods onto nodes.")
    assert llm.prompts == []
    assert [c.supported for c in judgement.claims] == [False] and judgement.flagged


async def test_an_answer_without_claims_is_grounded() -> None:
    for answer in ("I could not find this in the project's material.", "Do you mean moves or copies?", "  "):
        judgement, llm = await judge(answer=answer)
        assert judgement.claims == [] and judgement.groundedness == 1.0 and not judgement.flagged
        assert llm.prompts == []


async def test_malformed_reply_is_retried_once() -> None:
    usage = TokenUsage()
    judgement, llm = await judge(AIMessage(content='{"verdict": "maybe'), YES, YES, usage=usage)
    assert judgement.groundedness == 1.0 and len(llm.prompts) == 3
    assert "not valid JSON" in llm.prompts[1][-1].content
    assert sum(entry["calls"] for entry in usage.by_model.values()) == 3


async def test_a_reply_malformed_twice_fails() -> None:
    with pytest.raises(StructuredOutputError):
        await judge(AIMessage(content="Looks fine."), AIMessage(content='{"verdict": "perhaps"}'))


class ExactTextEmbeddings(Embeddings):
    """Unit vectors seeded by the text: the same text scores cosine 1, any other text about 0."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).standard_normal(256)
        return list(vector / np.linalg.norm(vector))


async def test_with_embeddings_a_claim_far_from_every_passage_is_unsupported_without_a_model_call() -> None:
    answer = "There can only be one owner at a time. Each value has one owner at a time."
    judgement, llm = await judge(YES, answer=answer, embeddings=ExactTextEmbeddings())
    # The first sentence is a passage word for word; this fake embedding puts the paraphrase far away.
    assert (
        len(llm.prompts) == 1
        and "Claim: There can only be one owner at a time." in llm.prompts[0][-1].content
    )
    assert [c.supported for c in judgement.claims] == [True, False]
    assert judgement.claims[0].chunk_ids == [11]


def test_best_passage_and_no_fact_sentences() -> None:
    chunks = [(c.id, c.text) for c in CHUNKS]
    passage = best_passage("The value is dropped when its owner goes out of scope.", chunks, 600)
    assert passage is not None and passage.chunk_id == 12 and passage.coverage == 1.0
    assert passage.text == "When the owner goes out of scope, the value will be dropped."
    # Two adjacent sentences count together when the claim spans them.
    spanning = best_passage("Without a garbage collector, a value is dropped by its owner.", chunks, 600)
    assert (
        spanning is not None and spanning.text.startswith("Rust frees memory") and "dropped" in spanning.text
    )
    assert best_passage("?!", chunks, 600) is None and best_passage("owner", [], 600) is None
    assert states_no_fact("Não encontrei isso no material do projeto.") and not states_no_fact(
        "Rust is fast."
    )


def test_answer_sentences() -> None:
    assert answer_sentences("Ownership moves.\n- It is checked at compile time.\n2) No GC. ", 6) == [
        "Ownership moves.",
        "It is checked at compile time.",
        "No GC.",
    ]
    # Past the limit the rest is checked as one sentence, so nothing goes unchecked.
    assert answer_sentences("A. B. C. D.", 3) == ["A.", "B.", "C. D."]
    assert answer_sentences("Version 3.5 of it. Done", 6) == ["Version 3.5 of it.", "Done"]
