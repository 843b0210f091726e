"""What the agents show the model, how answers are judged, and where agent runs are traced."""

from typing import Literal

from pydantic import Field

from core.settings.group import SettingsGroup


class QaSettings(SettingsGroup):
    # How many characters of the retrieved chunks the QA answer and option-scoring prompts show
    # (agents/qa/config.py); unset: the defaults read off the development data. A hosted model with a
    # fast prefill can afford more.
    context_chars: int | None = Field(default=None, gt=0, validation_alias="QA_CONTEXT_CHARS")
    choice_context_chars: int | None = Field(default=None, gt=0, validation_alias="QA_CHOICE_CONTEXT_CHARS")
    # The answer-support check (agents/qa/support.py) was calibrated on the embedded 1.5B model; a
    # hosted model that paraphrases more may need a lower share; 0 turns the check off.
    support_min: float | None = Field(default=None, ge=0, le=1, validation_alias="QA_SUPPORT_MIN")
    # Why a chosen option is right: "passage" (the shown passage's sentence, no model call) or "model"
    # (an explanation the model writes; a generation more per reply). Unset: agents/qa/config.py.
    choice_explain: Literal["passage", "model"] | None = Field(
        default=None, validation_alias="QA_CHOICE_EXPLAIN"
    )
    # Orders the options' letters are scored in (each a scoring call; agents/qa/choice.py). Unset:
    # agents/qa/config.py.
    choice_orders: int | None = Field(default=None, ge=1, le=8, validation_alias="QA_CHOICE_ORDERS")
    # Every confidence signal, also those the calibration found worthless for this model (their checks
    # cost model calls): for runs whose records feed a refit (evals, `studyai calibrate` sets it itself).
    all_signals: bool = Field(default=False, validation_alias="QA_ALL_SIGNALS")
    # How often a process re-reads the stored confidence calibration: a refit on any machine labels
    # answers everywhere within this time (core/confidence/source.py).
    calibration_refresh_s: float = Field(default=30.0, gt=0, validation_alias="CALIBRATION_REFRESH_S")


class GroundednessSettings(SettingsGroup):
    """Sampled groundedness judging of answers (agents/runs/audit.py, workers/jobs/judge.py)."""

    # Share of answered QA requests judged; a project's own rate overrides it.
    sample_rate: float = Field(default=0.15, ge=0.0, le=1.0, validation_alias="GROUNDEDNESS_SAMPLE_RATE")
    # The judge also weighs each accepted claim against its own opposite (three more short model calls
    # per accepted claim; agents/common/contrast.py). Needs log-probabilities from the endpoint.
    contrast_check: bool = Field(default=True, validation_alias="GROUNDEDNESS_CONTRAST_CHECK")
    # A project's own sample rate may not exceed this (422), so an editor cannot turn every answer into
    # a judge job; a rate stored before the cap is clamped to it when sampling.
    sample_rate_max: float = Field(
        default=0.5, ge=0.0, le=1.0, validation_alias="GROUNDEDNESS_SAMPLE_RATE_MAX"
    )
    # A project's sampled answers still waiting for the judge: past this many, answers are not sampled
    # until the judge catches up, so a class asking faster than the model judges keeps a bounded queue
    # (the log line says judge_backlog_full) instead of one that grows all day.
    backlog_max: int = Field(default=50, ge=1, validation_alias="GROUNDEDNESS_BACKLOG_MAX")


class TracingSettings(SettingsGroup):
    """LangSmith: with an API key, agent runs are traced and groundedness verdicts attached as feedback;
    without one nothing is sent anywhere."""

    langsmith_api_key: str = Field(default="", validation_alias="LANGSMITH_API_KEY")
    langsmith_endpoint: str = Field(
        default="https://api.smith.langchain.com", validation_alias="LANGSMITH_ENDPOINT"
    )
    langsmith_project: str = Field(default="studyai", validation_alias="LANGSMITH_PROJECT")
