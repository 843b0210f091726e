"""Calibrated confidence: a probability that an answer or a grade is right, fitted per chat model and
embedding model on labelled questions, and the label (high, medium, low) a student and a teacher see."""

from core.confidence.model import Calibration, Confidence, KindModel, Label, uncalibrated
from core.confidence.store import calibration_for, chat_model_key, save_calibration

__all__ = [
    "Calibration",
    "Confidence",
    "KindModel",
    "Label",
    "calibration_for",
    "chat_model_key",
    "save_calibration",
    "uncalibrated",
]
