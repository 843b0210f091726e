"""How sure a grade is (core/confidence calibrates it), and the second grading that does not depend on
how an answer addresses its reader.

- The verdict check: after the grading prompt and the grader's own reply (both cached by the server),
  one token: "is the student answer correct?" P(yes). A grade the model itself doubts when asked
  differently is one to check.
- Addressed sentences: every sentence of the answer about its grading rather than its subject (the
  teacher or the grader named, "this answer", the grade or the reference answer mentioned, please).
  The screens catch the phrasings they know and forfeit the grade; for any other answer that has such
  sentences, the answer is graded again without them and the lower grade is kept, so a pull on the
  grader no pattern names cannot raise a grade either.
- The signals: the final and the model's own score, the verdict check and how far it is from the
  verdict, the answer's agreement with the reference's key terms, what the screens left out, and how
  much the second grading lowered the grade.
- A "correct" grade is labelled high only on evidence that is not the grader agreeing with itself
  (`matches_reference`): on a grading set nobody here had tuned on, every wrong answer the grader
  called correct was among its high-labelled grades, with a verdict check that agreed with it. A high
  grade settles at once (mastery, the schedule); the others are at most medium."""

import re
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agents.common.one_token import yes_probability
from core.llm.structured import TokenUsage
from core.text.words import sentence_pieces, term_coverage, words

VERDICT_CHECK = (
    "Is the student answer correct: does it say what the reference answer says? Answer with one word,"
    " yes or no."
)
# A sentence about the grading rather than the subject: the marker named or spoken to, the answer
# itself talked about, the grade asked for. Not a bare "you": students explain with a generic "you"
# ("you write the value after break"), and on the grading set's dev split removing such sentences took
# the content out of three answers and lowered their grades below their labels.
_ADDRESSED = re.compile(
    r"\b(grader|grading|graded|teacher|professor|professora|examiner|marker|instructor|tutor|avaliador"
    r"|avaliadora|corretor|corretora|sir|madam)\b"
    r"|\b(this|my|the above|the following)\s+(answer|response|reply|submission)\b"
    r"|\b(esta|essa|minha)\s+resposta\b"
    r"|\b(grade|full marks|full credit|score of|reference answer|expected answer|answer key)\b"
    r"|\b(nota|notas|pontuação|pontuacao|gabarito|resposta de referência|resposta esperada)\b"
    r"|^\W*(please|kindly|por favor)\b",
    re.IGNORECASE | re.UNICODE,
)
EXPECTED_YES = {"correct": 1.0, "partially_correct": 0.5, "incorrect": 0.0}
# Each text holds this share of the other's content words. Chosen on the fit half of the grading dev
# split (evals/grading/dataset.py dev_part): no answer labelled other than correct reached 0.40 both
# ways there; 0.6 leaves a margin. On the report half it passes 4 of 10 correct answers and no other.
MATCH_SHARE = 0.6
# "n't" splits into "t"; a paraphrase that flips one of these says the opposite in the same words.
_NEGATIONS = frozenset(
    {"not", "no", "never", "cannot", "none", "nothing", "nor", "t"}
    | {"não", "nao", "nunca", "nem", "nenhum", "nenhuma", "nada", "jamais"}
)
UNMATCHED = "high needs the answer to say what the reference says in its words"
MATCHED = "the answer says what the reference says in its words"


def matches_reference(reference: str, answer: str) -> bool:
    """Whether the answer says what the reference says in its words (most of each text's content words
    in the other), with the same numbers and the same negations: evidence for a "correct" grade that
    does not come from the grader (its own checks agree with it whether it is right or wrong)."""
    if not reference.strip() or not answer.strip():
        return False
    shares = (term_coverage(reference, answer), term_coverage(answer, reference))
    if any(share is None or share < MATCH_SHARE for share in shares):
        return False
    said = [words(text) for text in (reference, answer)]
    numbers = [{word for word in found if word.isdigit()} for found in said]
    negations = [sum(word in _NEGATIONS for word in found) for found in said]
    return numbers[0] == numbers[1] and negations[0] == negations[1]


def settled_label(confidence: dict[str, Any], verdict: str, reference: str, answer: str) -> dict[str, Any]:
    """The calibration's confidence, except for a "correct" verdict: high exactly where the answer says
    what the reference says (`matches_reference`: two sources agree, not the grader with itself), at
    most medium elsewhere."""
    if verdict != "correct":
        return confidence
    if matches_reference(reference, answer):
        return confidence | {"label": "high", "reason": MATCHED}
    if confidence["label"] == "high":
        return confidence | {"label": "medium", "reason": UNMATCHED}
    return confidence


def without_addressed(answer: str) -> tuple[str, tuple[str, ...]]:
    """The answer without its sentences addressed to a reader, and those sentences."""
    kept, removed = [], []
    for piece in sentence_pieces(answer):
        (removed if _ADDRESSED.search(piece.strip()) else kept).append(piece)
    return "".join(kept).strip(), tuple(p.strip() for p in removed if p.strip())


def read_any(sentences: tuple[str, ...], graded: str) -> bool:
    """Whether the grader read any clause of these sentences (the topical cut may have left some out)."""
    clauses = (piece.strip(" ,;:.") for sentence in sentences for piece in re.split(r"[,;:]\s+", sentence))
    return any(clause and clause in graded for clause in clauses)


async def verdict_check(
    llm: Any, messages: list[BaseMessage], reply_json: str, usage: TokenUsage | None
) -> float | None:
    asked = [*messages, AIMessage(content=reply_json), HumanMessage(content=VERDICT_CHECK)]
    return await yes_probability(llm, asked, usage)


def grade_signals(
    grade: dict[str, Any], *, model_score: float, verdict_yes: float | None, second_drop: float, words: int
) -> dict[str, float]:
    signals = {
        "score": float(grade["score"]),
        "model_score": model_score,
        "screened": float(len(grade.get("screened", [])) > 0),
        "off_subject": float(len(grade.get("off_subject", [])) > 0),
        "second_drop": second_drop,
        "answer_words": float(words),
    }
    if grade.get("reference_overlap") is not None:
        signals["overlap"] = float(grade["reference_overlap"])
    if verdict_yes is not None:
        signals["verdict_yes"] = verdict_yes
        signals["check_gap"] = abs(verdict_yes - EXPECTED_YES[grade["verdict"]])
    return signals
