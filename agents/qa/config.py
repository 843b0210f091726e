"""RAG QA knobs: how much context the small model sees, and where the relevance gate sits."""

from dataclasses import dataclass, replace

from core.settings.agents import QaSettings


@dataclass(frozen=True)
class QAConfig:
    profile: str = "qa"  # the retriever profile (top 9)
    answer_chunks: int = 4  # the best chunks shown to the answer model: short prompts, fast first token
    chunk_chars: int = 700  # at most this much of any one chunk
    # All the shown chunks' windows together (agents/qa/excerpts.py): the prompt's size, and so the
    # time to the first token, is mostly this budget. Read off the development QA cases (FaQuAD
    # extractive, quiz short answers, absent; `QA_CONTEXT_CHARS=N python -m evals.qa --kinds
    # extractive,short_answer,absent`, one run each, same machine; evals/reports/qa-dev.md): 2800 ->
    # ~720 tokens to prefill after the cached system prompt, TTFT p50 12.5 s, FaQuAD 20/20, short
    # answers 6/12; 1400 -> ~480 tokens, TTFT p50 8.0 s, FaQuAD 17/20, short answers 7/12. Later, on an
    # AVX-512 machine (evals/reports/qa-context-dev.md): 1400 -> extractive TTFT p50 5.4 s, FaQuAD
    # 19/20, short answers 7/12; 1000 -> 3.3 s, 20/20, 8/12. Below it the extractive answers fall
    # (evals/reports/qa-prompt-budget-dev.md): 700 -> 14/20, 500 -> 16/20, for ~250 / ~180 tokens.
    context_chars: int = 1000
    evidence_passages: int = 2  # sent as the stream's `evidence` event before the model's first token
    history_turns: int = 3  # question/answer pairs the planner sees
    history_chars: int = 300  # each earlier message trimmed to this many characters
    planner_max_tokens: int = 160
    answer_max_tokens: int = 400
    # A question with options (agents/qa/choice.py): the windows' budget for the stem and the
    # options, how many option orders are scored, and the cap on the explanation after the choice.
    # On the 55 development quizzes (`python -m evals.choice --methods production --context-chars
    # 2000,1400,1000,600`, evals/reports/choice-budgets-dev.md) accuracy did not move with it (28, 26,
    # 26, 29 right) while the wait for the choice fell from 7.2 to 3.3 s.
    choice_context_chars: int = 600
    # "letters", "verify" (each option judged yes/no alone) or "both" (multiplied). On 24 development
    # quiz questions (`python -m evals.qa --rust-limit 28 --faquad-limit 0 --no-absent --kinds
    # multiple_choice`, one run recording all three): letters 13, verify 13, both 11 right; letters is
    # the cheaper of the two best (two short scoring calls against one per option). On all 55
    # (`python -m evals.choice`, evals/reports/choice-dev.md): letters 25, verify 25, every rotation
    # 28, option likelihood (cloze) 25, reasoning first 26; none is a measured improvement.
    choice_method: str = "letters"
    # One scoring call: the given and the reversed order were not a measured gain (evals.choice
    # 29 vs 28 of 55 for one order, evals/reports/choice-orders-dev.md; through the product, 28 with two
    # orders and 29 with one, benchmarks/reports/qa_latency.md), and the second order's prefill was a
    # sixth of the wait for the chosen option.
    choice_orders: int = 1
    # Why the chosen option: "passage" quotes the shown passage's sentence that states it (no model
    # call: the reply is the scoring alone), "model" has the model explain it from the excerpts (a
    # generation of up to explain_max_tokens after the choice; a hosted model may explain well).
    choice_explain: str = "passage"
    explain_max_tokens: int = 120
    # The relevance gate (agents/qa/gate.py): its cosine thresholds belong to the embedding model
    # (core/embeddings/thresholds.py, ctx.thresholds); this share of the question's content words must
    # be in the best chunks when the cosine alone does not decide.
    coverage_min: float = 0.8  # evals/reports/gate-dev.md
    # After the answer (agents/qa/support.py): an answer with fewer than this share of its own content
    # words in the excerpts it was shown came from the model's knowledge and is withheld; answers with
    # fewer than support_words content words are not judged. Low on purpose: faithful paraphrases
    # were seen at 0.29.
    support_min: float = 0.25
    support_words: int = 4


DEFAULT_CONFIG = QAConfig()


def qa_config(settings: QaSettings) -> QAConfig:
    """The defaults with the deployment's overrides (QA_CONTEXT_CHARS, QA_CHOICE_CONTEXT_CHARS,
    QA_SUPPORT_MIN, QA_CHOICE_EXPLAIN, QA_CHOICE_ORDERS)."""
    return replace(
        DEFAULT_CONFIG,
        context_chars=settings.context_chars or DEFAULT_CONFIG.context_chars,
        choice_context_chars=settings.choice_context_chars or DEFAULT_CONFIG.choice_context_chars,
        support_min=DEFAULT_CONFIG.support_min if settings.support_min is None else settings.support_min,
        choice_explain=settings.choice_explain or DEFAULT_CONFIG.choice_explain,
        choice_orders=settings.choice_orders or DEFAULT_CONFIG.choice_orders,
    )
