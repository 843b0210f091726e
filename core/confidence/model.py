"""A fitted calibration applied: signals in, a probability of being right and a label out.

One logistic model per kind of reply ("choice": a question with options; "answer": a free answer;
"grade": the Question Evaluator's verdict), each over its own signals, standardised with the means
and scales of the questions it was fitted on. A reply missing a log-probability signal its fit uses (an
endpoint without log-probabilities) gets no probability: "medium", with the reason; another missing
signal takes its mean. Applying it is a dot
product: the runtime needs no fitting library (core/confidence/fit.py fits)."""

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Label = Literal["high", "medium", "low"]
# Probabilities and scores whose distance from an even call says more than their value: a grade of 0.5
# or a verdict check at P(yes) 0.5 is the grader hesitating (on the grading set's dev split the
# extremity of the verdict check told right grades from wrong at AUROC 0.65, its value at 0.45).
EXTREMES = ("score", "model_score", "verdict_yes", "self_yes", "p_top", "closed_p")
# Signals computed from another one (besides `<name>_extremity`): the one they come from is needed too.
DERIVED_FROM = {"check_gap": "verdict_yes"}


UNCALIBRATED = "uncalibrated: no fitted confidence for the chat model"
MISSING = "uncalibrated: the model's reply lacked what the fit rests on:"


# Signals read from the model's log-probabilities: an endpoint that sends none leaves them out, and a fit
# that rests on one cannot label such a reply. Any other signal a reply lacks by design (the support of
# an answer too short to judge) takes its fitted mean, so it moves nothing.
FROM_LOGPROBS = frozenset({
    "answer_logprob_mean", "answer_logprob_min", "p_top", "margin", "options", "orders_agree",
    "p_order_min", "closed_agree", "closed_p", "self_yes", "verdict_yes",
})  # fmt: skip


def _from_logprobs(feature: str) -> bool:
    name = DERIVED_FROM.get(feature, feature.removesuffix("_extremity"))
    return name in FROM_LOGPROBS


def with_extremes(signals: dict[str, float]) -> dict[str, float]:
    """The signals plus each EXTREMES one's distance from 0.5, scaled to 0..1 (`<name>_extremity`)."""
    extremes = {f"{name}_extremity": abs(signals[name] - 0.5) * 2 for name in EXTREMES if name in signals}
    return signals | extremes


@dataclass(frozen=True)
class Confidence:
    p: float | None  # probability of being right; None where the model pair is not calibrated
    label: Label
    signals: dict[str, float]
    reason: str | None = None  # why there is no probability, where there is none

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class KindModel:
    features: tuple[str, ...]
    means: tuple[float, ...]
    scales: tuple[float, ...]
    coefficients: tuple[float, ...]
    intercept: float
    high_min: float  # p at or above: high
    low_below: float  # p below: low

    def probability(self, signals: dict[str, float]) -> float:
        total = self.intercept
        for name, mean, scale, weight in zip(
            self.features, self.means, self.scales, self.coefficients, strict=True
        ):
            value = signals.get(name, mean)
            total += weight * (value - mean) / scale
        return 1.0 / (1.0 + math.exp(-total))

    def uses(self, signal: str) -> bool:
        """Whether the fit kept `signal` or one derived from it."""
        return any(
            name in (signal, f"{signal}_extremity") or DERIVED_FROM.get(name) == signal
            for name in self.features
        )

    def label(self, p: float) -> Label:
        if p >= self.high_min:
            return "high"
        return "low" if p < self.low_below else "medium"

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "KindModel":
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


@dataclass(frozen=True)
class Calibration:
    chat_model: str
    embedding_model: str
    kinds: dict[str, KindModel] = field(default_factory=dict)
    source: str = "uncalibrated"
    fitted_on: str = ""  # what it was fitted on, for the record
    # Compute every signal, also those the fit dropped: runs whose records feed a refit (QA_ALL_SIGNALS,
    # `studyai calibrate`). Not part of the stored calibration.
    all_signals: bool = False

    @property
    def calibrated(self) -> bool:
        return bool(self.kinds)

    def assess(self, kind: str, signals: dict[str, float]) -> Confidence:
        """The reply's confidence; "medium" with no probability, and the reason, where this kind is not
        fitted for the model or the reply lacks a signal its fit rests on (an endpoint that sent no
        log-probabilities): a label from the other signals alone would claim what was never fitted."""
        model = self.kinds.get(kind)
        if model is None:
            return Confidence(None, "medium", signals, f"{UNCALIBRATED} {self.chat_model}")
        present = with_extremes(signals)
        missing = [name for name in model.features if name not in present and _from_logprobs(name)]
        if missing:
            return Confidence(None, "medium", signals, f"{MISSING} {', '.join(missing)}")
        p = model.probability(present)
        return Confidence(round(p, 4), model.label(p), signals)

    def needs(self, kind: str, signal: str) -> bool:
        """Whether a signal that costs a model call is worth it: only if this kind's fit kept it (the
        calibration records what separated right from wrong for this model, so a refit on a stronger
        model brings a dropped check back). Where nothing is fitted the label is "medium" whatever the
        signals say, so none is worth a call, except in runs that record them for a fit (all_signals)."""
        model = self.kinds.get(kind)
        return self.all_signals or (model is not None and model.uses(signal))

    def as_dict(self) -> dict[str, Any]:
        values = asdict(self)
        values.pop("all_signals")
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Calibration":
        kinds = {name: KindModel.from_dict(model) for name, model in values.get("kinds", {}).items()}
        return cls(**{**values, "kinds": kinds})


def uncalibrated(chat_model: str, embedding_model: str) -> Calibration:
    return Calibration(chat_model, embedding_model)
