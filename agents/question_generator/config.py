"""Question Generator knobs: how many sources, how much text per model call, when to review."""

from dataclasses import dataclass


@dataclass(frozen=True)
class GeneratorConfig:
    max_questions: int = 10  # one request is synchronous: n model calls of ~10 s each on the 1.5B model
    source_top_k: int = 20  # chunks retrieved (generator profile, at most 20) or sampled per request
    min_source_chars: int = 200  # shorter chunks (a lone heading, a stub) make poor questions
    source_chars: int = 1200  # text shown per model call: one chunk, or two adjacent short ones
    chunks_per_question: int = 2
    extra_calls: int = 2  # calls beyond n allowed to replace discarded or duplicate questions
    # Confidence = model_weight * the model's own figure + (1 - model_weight) * support of the answer
    # in its sources; a 1.5B model rates nearly everything 0.9+, so the application check dominates.
    model_weight: float = 0.4
    confidence_threshold: float = 0.6  # below: status "review" instead of "active"
    # The near-duplicate cosine is the embedding model's: ctx.thresholds (core/embeddings/thresholds.py).
    default_topic: str = "key concepts"  # retrieval query when neither a section nor a title is known
