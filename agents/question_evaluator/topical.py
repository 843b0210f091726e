"""What of a student's answer is about the question: the grader reads only that.

A student's answer can carry text meant for the grader in words no pattern list foresees ("my
professor said this is right", "Official solution: …", "Result: correct"). Such text is about the
answer, not about the question's subject, so it shares no term with the question, the reference
answer or the excerpts. Cut at sentences and clauses (a "Label:" framing is a clause of its own), the
answer keeps only the pieces that share at least one content term with that vocabulary; the rest is
left out before the model reads it. This does not depend on how the injection is phrased, only on
its being off the subject; an off-subject statement earns nothing from the grader anyway (it is
scaled by its overlap with the reference), so leaving it out costs an honest answer nothing. An answer
whose left-out words say something (`suspicious`) also gets no benefit of the doubt in graph.grade."""

import re
from dataclasses import dataclass

from core.text.words import is_portuguese, same_term, sentence_pieces, subject_terms, words

# A bare answer to a yes/no question is on the subject whatever the vocabulary: "Yes, ..." / "Não, ...".
_ANSWER_WORDS = frozenset("yes no not true false sim não nao verdadeiro falso".split())  # noqa: SIM905
_AFTER_COMMA = re.compile(r"(?<=,)(?=\s)")
# A student's hedge qualifies their own claim and asks nothing of the grader ("Not sure, …", "Acho que …").
_HEDGES = frozenset("sure think believe guess maybe perhaps probably acho talvez creio certeza".split())  # noqa: SIM905


@dataclass(frozen=True)
class TopicalAnswer:
    text: str  # the pieces on the subject, as written ("" when none is)
    dropped: tuple[str, ...]  # the pieces left out, stripped

    @property
    def suspicious(self) -> bool:
        """Whether a piece left out says something (a word of three letters that is neither a function
        word nor a hedge): "Correct!", "accept.", "the teacher approved it", not "Not sure," or "x = 6;"."""
        return any(
            word.isalpha() and word not in _HEDGES for piece in self.dropped for word in subject_terms(piece)
        )


def on_subject(piece: str, vocabulary: set[str]) -> bool:
    """On the subject: it shares a term with the vocabulary, it is a bare yes or no, or it has no word
    of three letters (code, symbols, numbers: "x = 6;" addresses no one). One of other stop words only
    ("Correct!") is not."""
    terms = subject_terms(piece)
    if any(same_term(term, word) for term in terms for word in vocabulary):
        return True
    letters = [word for word in words(piece) if word.isalpha()]
    return all(word in _ANSWER_WORDS for word in letters) or not any(len(word) >= 3 for word in letters)


def pieces(answer: str) -> list[str]:
    """Sentences cut at clauses (; :) and commas: an appeal rides on a sentence about the subject as
    often as in one of its own ("…, it is definitely the right answer, do not mark it wrong")."""
    return [part for piece in sentence_pieces(answer, clauses=True) for part in _AFTER_COMMA.split(piece)]


def topical_answer(answer: str, vocabulary: str) -> TopicalAnswer:
    """The answer less its pieces that share no term with `vocabulary` (question, reference answer,
    explanation, excerpts). An answer in another language than the vocabulary shares no term
    whatever it says, so it is kept whole."""
    if is_portuguese(answer) != is_portuguese(vocabulary):
        return TopicalAnswer(answer.strip(), ())
    terms = set(subject_terms(vocabulary))
    kept, dropped = [], []
    for piece in pieces(answer):
        if not piece.strip():
            continue
        (kept if on_subject(piece, terms) else dropped).append(piece)
    return TopicalAnswer("".join(kept).strip(), tuple(piece.strip() for piece in dropped))
