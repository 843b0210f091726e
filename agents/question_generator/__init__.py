"""Question Generator: quiz questions with answers and flashcards (front = question, back = answer),
grounded in a project's chunks, checked by the application (sources, distractors, support of the
answer, near-duplicates) before they are stored as pending items for a teacher to review."""

from agents.question_generator.config import GeneratorConfig
from agents.question_generator.graph import graph
from agents.question_generator.state import QUESTION_TYPES, InputState, OutputState, QuestionType, Rejection

__all__ = [
    "QUESTION_TYPES",
    "GeneratorConfig",
    "InputState",
    "OutputState",
    "QuestionType",
    "Rejection",
    "graph",
]
