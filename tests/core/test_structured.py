"""Structured replies: one cut at the output cap is retried with the reason, then fails clearly; the
llama.cpp grammar gets the schema's decoding bounds."""

from typing import Any, ClassVar

import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, Field

from core.llm.structured import StructuredOutputError, TokenUsage, ask_structured, grammar_schema


class Card(BaseModel):
    front: str
    back: str


def cut_completion() -> ChatCompletion:
    return ChatCompletion.model_validate(
        {
            "id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": "length",
                         "message": {"role": "assistant", "content": '{"front": "What is own'}}],
            "usage": {"prompt_tokens": 40, "completion_tokens": 512, "total_tokens": 552},
        }
    )  # fmt: skip


class CutThenWhole(BaseChatModel):
    """As ChatOpenAI behaves with `response_format` against a server whose reply hit max_tokens."""

    replies: list[str | None]
    seen: list[list[BaseMessage]]
    schemas: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "cut-then-whole"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        assert kwargs["response_format"]["type"] == "json_object"
        self.seen.append(messages)
        self.schemas.append(kwargs["response_format"]["schema"])
        reply = self.replies.pop(0)
        if reply is None:
            raise openai.LengthFinishReasonError(completion=cut_completion())
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=reply))])


async def test_a_reply_cut_at_the_cap_is_retried_with_the_reason() -> None:
    llm = CutThenWhole(replies=[None, '{"front": "What is ownership?", "back": "A set of rules."}'], seen=[])
    usage = TokenUsage()
    card = await ask_structured(llm, Card, [HumanMessage("One card.")], mode="llama-grammar", usage=usage)
    assert card == Card(front="What is ownership?", back="A set of rules.")
    retry = llm.seen[1]
    assert retry[1].content == '{"front": "What is own'  # the cut reply, shown back
    assert "cut at the output token limit" in str(retry[2].content)
    assert usage.by_model["CutThenWhole"]["output_tokens"] == 512  # the cut reply's tokens are counted


async def test_two_cut_replies_fail_clearly() -> None:
    llm = CutThenWhole(replies=[None, None], seen=[])
    with pytest.raises(StructuredOutputError, match="did not match Card after a retry: the reply was cut"):
        await ask_structured(llm, Card, [HumanMessage("One card.")], mode="llama-grammar")


class Bounded(BaseModel):
    front: str
    tags: list[str]
    grammar_bounds: ClassVar[dict[str, dict[str, Any]]] = {
        "front": {"maxLength": 40},
        "tags": {"maxItems": 3, "items": {"maxLength": 10}},
    }


def test_the_grammar_schema_carries_the_bounds_and_validation_does_not() -> None:
    schema = grammar_schema(Bounded)
    assert schema["properties"]["front"] == {"title": "Front", "type": "string", "maxLength": 40}
    assert schema["properties"]["tags"]["maxItems"] == 3
    assert schema["properties"]["tags"]["items"] == {"type": "string", "maxLength": 10}
    assert "maxLength" not in str(Bounded.model_json_schema())  # other modes' schemas are unchanged
    # A server that ignored the bounds still gets its reply accepted rather than failed.
    assert Bounded.model_validate({"front": "x" * 100, "tags": ["a"] * 9}).front == "x" * 100


async def test_the_llama_grammar_request_sends_the_bounded_schema() -> None:
    llm = CutThenWhole(replies=['{"front": "Ownership", "tags": ["rust"]}'], seen=[])
    await ask_structured(llm, Bounded, [HumanMessage("One card.")], mode="llama-grammar")
    assert llm.schemas == [grammar_schema(Bounded)]
