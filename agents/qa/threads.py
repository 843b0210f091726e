"""Between a thread's stored chat messages and the graph: history in, one turn out."""

import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agents.qa.state import Turn


def history_from_messages(messages: list[BaseMessage]) -> list[Turn]:
    turns: list[Turn] = []
    for message in messages:
        text = message.content if isinstance(message.content, str) else str(message.text)
        if isinstance(message, HumanMessage):
            turns.append({"role": "user", "text": text})
        elif isinstance(message, AIMessage):
            turns.append({"role": "assistant", "text": text})
    return turns


# Words that make a question lean on the one before it ("and mutable ones?", "e isso?").
_LEANS_ON_HISTORY = re.compile(
    r"^\s*(and|but|also|what about|how about|e|mas|e quanto|e sobre)\b"
    r"|\b(it|its|that|this|they|them|those|these|ones|isso|isto|ele|ela|eles|elas|esse|essa|esses|essas)\b",
    re.IGNORECASE,
)


def leans_on_history(question: str) -> bool:
    return _LEANS_ON_HISTORY.search(question) is not None


def standalone_question(question: str, rewritten: str, history: list[Turn]) -> tuple[str, bool]:
    """The question to search and answer with, and whether the planner's rewrite was used. When a
    follow-up that leans on the conversation came back unchanged, the previous question is put in
    front of it: retrieval then at least sees the subject."""
    changed = rewritten.strip().lower() != question.strip().lower()
    if not history or changed or not leans_on_history(question):
        return rewritten, changed
    previous = next((turn["text"] for turn in reversed(history) if turn["role"] == "user"), "")
    return (f"{previous.strip()} {question.strip()}".strip(), False)


def turn_messages(question: str, result: dict[str, Any]) -> list[BaseMessage]:
    """The question and the reply as stored; the reply keeps its outcome and citations, so a
    thread can be shown again with its sources."""
    citations = [c.model_dump(mode="json") for c in result.get("citations", [])]
    return [
        HumanMessage(content=question),
        AIMessage(
            content=result.get("answer", ""),
            additional_kwargs={
                "outcome": result.get("outcome"),
                "has_answer": bool(result.get("has_answer")),
                "rewritten_question": (result.get("plan") or {}).get("question"),
                "citations": citations,
                # Shown again as it was first shown: its label, the unclaimed guess, what to read.
                "confidence": result.get("confidence"),
                "guess": result.get("guess"),
                "passages": result.get("passages", []),
            },
        ),
    ]
