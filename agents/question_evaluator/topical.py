"""What of a student's answer is about the question: the grader reads only that.

A student's answer can carry text meant for the grader in words no pattern list foresees ("my
professor said this is right", "Official solution: …", "Result: correct"). Such text is about the
answer, not about the question's subject, so it shares no term with the question, the reference
answer or the excerpts. Cut at sentences and clauses (a "Label:" framing is a clause of its own), the
answer keeps only the pieces that share at least one content term with that vocabulary; the rest is
left out before the model reads it. This does not depend on how the injection is phrased, only on
its being off the subject; an off-subject statement earns nothing from the grader anyway (it is
scaled by its overlap with the reference), so leaving it out costs an honest answer nothing."""

from dataclasses import dataclass

from core.text import content_words, is_portuguese, sentence_pieces, words


@dataclass(frozen=True)
class TopicalAnswer:
    text: str  # the pieces on the subject, as written ("" when none is)
    dropped: tuple[str, ...]  # the pieces left out, stripped


def same_term(word: str, other: str) -> bool:
    """The same word or a close form of it ('string'/'strings', 'owner'/'ownership'). Stricter than
    core.text.covers (a five-letter prefix), under which 'complete' is on the subject of "two's
    complement"; a word under four letters only as itself ('out' is not 'output')."""
    short, long = sorted((word, other), key=len)
    return short == long or (len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 4)


def on_subject(piece: str, vocabulary: set[str]) -> bool:
    """On the subject: it shares a term with the vocabulary, or it has no word of three letters (code,
    symbols, numbers: "x = 6;" addresses no one). One of stop words only ("Correct!") is not."""
    terms = content_words(piece, numbers=True)
    if any(same_term(term, word) for term in terms for word in vocabulary):
        return True
    return not any(word.isalpha() and len(word) >= 3 for word in words(piece))


def topical_answer(answer: str, vocabulary: str) -> TopicalAnswer:
    """The answer less its pieces that share no term with `vocabulary` (question, reference answer,
    explanation, excerpts). An answer in another language than the vocabulary shares no term
    whatever it says, so it is kept whole."""
    if is_portuguese(answer) != is_portuguese(vocabulary):
        return TopicalAnswer(answer.strip(), ())
    terms = set(content_words(vocabulary, numbers=True))
    kept, dropped = [], []
    for piece in sentence_pieces(answer, clauses=True):
        if not piece.strip():
            continue
        (kept if on_subject(piece, terms) else dropped).append(piece)
    return TopicalAnswer("".join(kept).strip(), tuple(piece.strip() for piece in dropped))
