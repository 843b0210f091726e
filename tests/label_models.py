"""Confidence label models for tests that set a calibration of their own (core/confidence)."""

from core.confidence.model import KindModel


def one_signal(
    feature: str, *, mean: float, scale: float, weight: float, high_min: float, low_below: float
) -> KindModel:
    """Labels from one signal alone: p = sigmoid(weight * (signal - mean) / scale), no intercept; high
    from `high_min`, low below `low_below`."""
    return KindModel((feature,), (mean,), (scale,), (weight,), 0.0, high_min=high_min, low_below=low_below)
