"""A local cross-encoder: reads query and passage together, so it sees what two separate embeddings miss.

sentence-transformers (and torch) are an optional extra, imported only when this reranker is built, so
the default install stays small. The model is loaded once and always runs on the CPU."""

import asyncio
import inspect
from pathlib import Path
from typing import Any

from core.retrieval.rerankers.base import passage_text
from core.retrieval.types import Candidate

INSTALL_HINT = 'pip install -e ".[cross-encoder]"'
MAX_LENGTH = 512  # tokens of query + passage; longer pairs are truncated, as BERT-style models need


class CrossEncoderReranker:
    name = "cross-encoder"

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise RuntimeError(
                f"The cross-encoder reranker needs sentence-transformers and torch: {INSTALL_HINT}"
            ) from exc
        options: dict[str, Any] = {"max_length": MAX_LENGTH, "device": "cpu"}
        # A local directory must never send the loader to the hub (there may be no network at all);
        # older sentence-transformers releases lack the flag, so ask the signature rather than the version.
        if Path(model).is_dir() and "local_files_only" in inspect.signature(CrossEncoder.__init__).parameters:
            options["local_files_only"] = True
        # Positional: the first parameter was renamed (model_name -> model_name_or_path) across releases.
        self._model = CrossEncoder(model, **options)
        self.model = model
        self.batch_size = batch_size

    async def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        pairs = [(query, passage_text(candidate)) for candidate in candidates]
        # Inference is CPU-bound for tens to hundreds of milliseconds: keep it off the event loop.
        scores = await asyncio.to_thread(
            self._model.predict, pairs, batch_size=self.batch_size, show_progress_bar=False
        )
        return [float(value) for value in scores]
