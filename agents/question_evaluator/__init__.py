"""Question Evaluator: grades a free-text answer against the reference answer and up to five chunks of
the question's own document; a multiple-choice option is graded exactly, without the model."""

from agents.question_evaluator.config import EvaluatorConfig
from agents.question_evaluator.graph import graph
from agents.question_evaluator.state import InputState, OutputState, Verdict

__all__ = ["EvaluatorConfig", "InputState", "OutputState", "Verdict", "graph"]
