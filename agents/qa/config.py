"""RAG QA knobs: how much context the small model sees, and where the relevance gate sits."""

from dataclasses import dataclass


@dataclass(frozen=True)
class QAConfig:
    profile: str = "qa"  # the retriever profile (top 9)
    answer_chunks: int = 4  # the best chunks shown to the answer model: short prompts, fast first token
    chunk_chars: int = 700  # each shown chunk trimmed to this many characters
    history_turns: int = 3  # question/answer pairs the planner sees
    history_chars: int = 300  # each earlier message trimmed to this many characters
    planner_max_tokens: int = 160
    answer_max_tokens: int = 400
    # A question with options (agents/qa/choice.py): each shown chunk's window for the stem and the
    # options, how many option orders are scored, and the cap on the explanation after the choice.
    choice_chars: int = 700
    # "letters", "verify" (each option judged yes/no alone) or "both" (multiplied). On 24 development
    # quiz questions (`python -m evals.qa --rust-limit 28 --faquad-limit 0 --no-absent --kinds
    # multiple_choice`, one run recording all three): letters 13, verify 13, both 11 right; letters is
    # the cheaper of the two best (two short scoring calls against one per option).
    choice_method: str = "letters"
    choice_orders: int = 2
    explain_max_tokens: int = 120
    # The relevance gate (agents/qa/gate.py): its cosine thresholds belong to the embedding model
    # (core/calibration.py, AgentContext.thresholds); this share of the question's content words must
    # be in the best chunks when the cosine alone does not decide.
    coverage_min: float = 0.8  # evals/reports/gate-dev.md


DEFAULT_CONFIG = QAConfig()
