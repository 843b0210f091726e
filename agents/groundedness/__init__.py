"""Groundedness judge: each sentence of an answer against the passage of its chunks that covers it
best; the application, not the model, turns the verdicts into scores and the flag."""

from agents.common.contrast import ContrastCheck
from agents.groundedness.config import JudgeConfig, judge_config
from agents.groundedness.judge import (
    RISK_FLAG_THRESHOLD,
    ClaimVerdict,
    JudgeChunk,
    Judgement,
    judge_answer,
    score_claims,
)

__all__ = [
    "RISK_FLAG_THRESHOLD",
    "ClaimVerdict",
    "ContrastCheck",
    "JudgeChunk",
    "JudgeConfig",
    "Judgement",
    "judge_answer",
    "judge_config",
    "score_claims",
]
