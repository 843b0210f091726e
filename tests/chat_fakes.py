"""Fake chat models for QA, grading and audio tests: the scripted replies in order, and the one-token yes/no
self-checks (agents/qa/signals.py, the grader's verdict check) or the groundedness judge's entailment
questions (the audio overview's line check) answered on the side, so a script lists only the replies a
test is about."""

import json
import math
from typing import Any

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.groundedness.prompts import ENTAILMENT_SYSTEM
from agents.qa.signals import ANSWER_CHECK, CHOICE_CHECK
from agents.question_evaluator.confidence import VERDICT_CHECK


def yes_no_reply(p_yes: float, *, logprobs: bool = True) -> ChatResult:
    top = [{"token": "yes", "logprob": math.log(p_yes)}, {"token": "no", "logprob": math.log(1 - p_yes)}]
    metadata = {"logprobs": {"content": [{"token": "yes", "top_logprobs": top}]}} if logprobs else {}
    message = AIMessage(content="yes" if p_yes >= 0.5 else "no", response_metadata=metadata)
    return ChatResult(generations=[ChatGeneration(message=message)])


def is_self_check(messages: list[BaseMessage]) -> bool:
    asked = str(messages[-1].content)
    return asked in (ANSWER_CHECK, VERDICT_CHECK) or asked.endswith(CHOICE_CHECK.split("}", 1)[1])


class ListChat(FakeMessagesListChatModel):
    self_check_yes: float = 0.9
    self_checks: int = 0  # how many were asked

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if is_self_check(messages):
            self.self_checks += 1
            return yes_no_reply(self.self_check_yes)
        return super()._generate(messages, *args, **kwargs)


class StreamingScripted(GenericFakeChatModel):
    """GenericFakeChatModel (each reply streamed in pieces) with the self-checks answered aside."""

    self_check_yes: float = 0.9
    self_checks: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if is_self_check(messages):
            self.self_checks += 1
            return yes_no_reply(self.self_check_yes)
        return super()._generate(messages, *args, **kwargs)


class ScriptThenVerdicts(FakeMessagesListChatModel):
    """The scripted replies to the writer; to the groundedness judge's question about a line (each claim
    that reaches the model), "no" where the claim holds one of `refuted`, else "yes"."""

    refuted: tuple[str, ...] = ()
    judged: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if messages[0].content == ENTAILMENT_SYSTEM:
            claim = str(messages[-1].content).split("Claim: ", 1)[1]
            self.judged.append(claim)
            verdict = "no" if any(word in claim for word in self.refuted) else "yes"
            return ChatResult(
                generations=[ChatGeneration(message=AIMessage(json.dumps({"verdict": verdict})))]
            )
        return super()._generate(messages, *args, **kwargs)
