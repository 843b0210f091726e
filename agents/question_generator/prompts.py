"""What the generator asks the model, and the flat shapes of its replies (one question per call).

The prompts are short on purpose: on the local 1.5B model every 100 prompt tokens cost ~1 s before
the first token, so the source text dominates and the instructions stay a few lines."""

from typing import Annotated, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from agents.question_generator.state import QuestionType
from core.retrieval import Candidate

# Fields the kinds of item share (a flashcard words some its own way): their descriptions are what the
# model reads in the schema.
QuestionText = Annotated[str, Field(description="the question")]
Explanation = Annotated[str, Field(description="one sentence: why the answer is right, from the source")]
Difficulty = Literal["easy", "medium", "hard"]
Confidence = Annotated[float, Field(description="0 to 1: how sure you are the source states the answer")]
Sources = Annotated[list[int], Field(min_length=1, description="ids of the source chunks used")]


class OpenQuestion(BaseModel):
    question: QuestionText
    answer: str = Field(description="the correct answer, short")
    explanation: Explanation
    difficulty: Difficulty
    confidence: Confidence
    sources: Sources


class ChoiceQuestion(BaseModel):
    question: QuestionText
    answer: str = Field(description="the correct option")
    distractors: list[str] = Field(
        min_length=3, max_length=3, description="3 wrong but plausible options, different from the answer"
    )
    explanation: Explanation
    difficulty: Difficulty
    confidence: Confidence
    sources: Sources


class Flashcard(BaseModel):
    question: str = Field(description="the front: a term, or a short question about one fact")
    answer: str = Field(description="the back: the definition or fact, one or two sentences")
    explanation: str = Field(description="one sentence from the source that states the back")
    difficulty: Difficulty
    confidence: float = Field(description="0 to 1: how sure you are the source states the back")
    sources: Sources


SCHEMAS: dict[QuestionType, type[BaseModel]] = {
    "multiple_choice": ChoiceQuestion,
    "short_answer": OpenQuestion,
    "application": OpenQuestion,
    "flashcard": Flashcard,
}

_KIND: dict[QuestionType, str] = {
    "multiple_choice": "a multiple-choice question with one correct answer and 3 wrong but plausible"
    " distractors",
    "short_answer": "a short-answer question whose answer is a word, a phrase or one sentence",
    "application": "an application question: a small concrete scenario (a short code snippet or"
    " situation, written out in the question) where the student must use an idea of the material to say"
    " what happens; the answer says what happens and why in one sentence",
    "flashcard": "a flashcard for spaced repetition: the question (front) names one key term or asks one"
    " short fact; the answer (back) gives its definition or the fact in one or two sentences",
}

_LANGUAGE = {
    "pt": "Write in Portuguese.",
    "en": "Write in English.",
    "auto": "Write in the language of the material.",
}

SYSTEM = (
    "You write quiz questions that test a student's understanding of their course material. Use only"
    " facts stated in the material. The student answers without seeing the material, so the question"
    " names the concept it asks about and includes any code it needs. Reply with JSON.\n"
    "question: one specific question.\n"
    "answer: the correct answer: a few words or one sentence.\n"
    "{distractors}"
    "explanation: one sentence from the material showing why the answer is right.\n"
    "difficulty: easy, medium or hard.\n"
    "confidence: 0 to 1, how sure you are that the material states this answer.\n"
    "sources: the numbers in brackets of the parts you used."
)
_DISTRACTORS = "distractors: 3 wrong but plausible options, each different from the answer.\n"


def format_source(candidate: Candidate, limit: int) -> str:
    """`[id] Title > Section: text`, whitespace collapsed and trimmed to `limit` characters."""
    header = candidate.context_header or candidate.row.get("document_title", "")
    text = " ".join(candidate.text.split())
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0] + " …"
    return f"[{candidate.chunk_id}] {header}: {text}"


def generation_messages(
    question_type: QuestionType, sources: list[Candidate], *, language: str, source_chars: int
) -> list[BaseMessage]:
    per_source = max(200, source_chars // max(1, len(sources)))
    blocks = "\n\n".join(format_source(candidate, per_source) for candidate in sources)
    system = SYSTEM.format(distractors=_DISTRACTORS if question_type == "multiple_choice" else "")
    return [
        SystemMessage(content=system),
        HumanMessage(
            content=f"Material:\n{blocks}\n\nWrite {_KIND[question_type]} about a specific point of the"
            f" material. {_LANGUAGE.get(language, _LANGUAGE['auto'])}"
        ),
    ]
