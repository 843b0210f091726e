"""Builds the configured reranker at start-up."""

from core.retrieval.rerankers.base import Reranker
from core.retrieval.rerankers.blend import ScoreBlend
from core.retrieval.rerankers.none import FusedOrder
from core.settings import Settings


def make_reranker(settings: Settings, name: str | None = None) -> Reranker:
    choice = name or settings.retrieval.reranker
    if choice == "none":
        return FusedOrder()
    if choice == "blend":
        return ScoreBlend(dense_weight=settings.retrieval.blend_dense_weight)
    if choice == "cross-encoder":
        if not settings.retrieval.cross_encoder_model:
            raise ValueError("RERANKER=cross-encoder needs CROSS_ENCODER_MODEL (a model name or local path)")
        from core.retrieval.rerankers.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(settings.retrieval.cross_encoder_model)
    if choice == "http":
        if not settings.retrieval.rerank_url:
            raise ValueError("RERANKER=http needs RERANK_URL (a text-embeddings-inference style service)")
        from core.retrieval.rerankers.http import HttpReranker

        return HttpReranker(settings.retrieval.rerank_url, api_key=settings.retrieval.rerank_api_key)
    raise ValueError(f"unknown reranker {choice!r}")
