"""Which chat model this instance uses and how, decided once and handed to child processes explicitly."""

from dataclasses import dataclass

from core.llm.chat import StructuredMode
from core.runtime.services import ServiceUrls
from core.settings import Settings

# A remote endpoint takes this many calls at once unless told; the embedded server one per slot.
REMOTE_CONCURRENCY = 4


@dataclass(frozen=True)
class ChatModelPlan:
    base_url: str | None  # None: no chat model (agent routes answer 503 with the reason)
    embedded: bool  # the llama.cpp server this instance started (LLM_BASE_URL unset)
    concurrency: int  # model calls admitted at once, across every process of the instance
    structured_mode: StructuredMode

    @classmethod
    def decide(cls, settings: Settings, urls: ServiceUrls) -> "ChatModelPlan":
        return cls.for_url(settings, urls.llm_base_url)

    @classmethod
    def for_url(cls, settings: Settings, base_url: str | None) -> "ChatModelPlan":
        """For a process with a chat model and nothing else of the runtime (an eval's judge): `base_url`
        is LLM_BASE_URL's, or that of the embedded server it started."""
        embedded = settings.llm.base_url is None
        concurrency = settings.llm.concurrency or (settings.llm.slots if embedded else REMOTE_CONCURRENCY)
        return cls(
            base_url=base_url,
            embedded=embedded,
            concurrency=concurrency,
            structured_mode=_structured_mode(settings, embedded),
        )

    def child_environment(self) -> dict[str, str]:
        """What a child process (a worker) needs to make the same decisions. An external model's URL is
        the child's own setting, so it decides alike; the embedded server's URL would look external to
        it (4 calls at once, function calling), so the resolved values travel with it."""
        if self.base_url is None:
            return {}
        if not self.embedded:
            return {"LLM_BASE_URL": self.base_url}
        return {
            "LLM_BASE_URL": self.base_url,
            "LLM_CONCURRENCY": str(self.concurrency),
            "LLM_STRUCTURED_OUTPUT": self.structured_mode,
        }


def _structured_mode(settings: Settings, embedded: bool) -> StructuredMode:
    if settings.llm.structured_output != "auto":
        return settings.llm.structured_output
    # An endpoint without json_schema is asked again with the schema in the instructions
    # (core/llm/refusals.py), so the answer still streams with its log-probabilities where it has them.
    return "llama-grammar" if embedded else "json_schema"
