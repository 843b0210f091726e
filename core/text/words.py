"""Text heuristics for English and Portuguese, in one place: function words and stop words, words
and content words, one crude stemmer, one sentence splitter, and language detection.

Everything here is a cheap rule with no model and no downloaded data, used where a model call would
cost too much (the QA relevance gate, answer-support and groundedness checks, the injection screen)
or where Postgres needs to be told a text-search configuration."""

import re
from collections.abc import Iterable
from typing import Literal

Language = Literal["pt", "en"]

# Function words: articles, prepositions, conjunctions, pronouns, auxiliaries, question words and
# the commonest adverbs. One list per language, merged from the lists the modules kept before.
_FUNCTION_WORDS = {
    "en": """
        a an the this that these those my your our its it's their i you he she we they them it me
        of in on at to for with without from into by about between than as
        and or but not no nor if then so also just only very
        is are was were be been being do does did have has had can could should would will may might
        what which who whom when where why how there
        all any each some such one ones two other more most less much many
    """,
    "pt": """
        a o as os um uma uns umas este esta esse essa estes estas esses essas isso eu você ele ela
        nós eles elas me lhe meu minha seu sua seus suas dele deles
        de do da dos das em no na nos nas num numa ao aos à às para por pelo pela pelos pelas com sem
        sobre entre até depois
        e ou mas nem se não sim também já só mesmo muito mais menos
        é são está estão ser foi pode podem
        que qual quais quando onde como porque quem quanto quantos
    """,
}
FUNCTION_WORDS: dict[Language, frozenset[str]] = {
    "en": frozenset(_FUNCTION_WORDS["en"].split()),
    "pt": frozenset(_FUNCTION_WORDS["pt"].split()),
}
# The function words only one of the two languages has ("a", "as", "do", "me" are both): these
# tell a language; shared ones say nothing about it.
MARKERS: dict[Language, frozenset[str]] = {
    "en": FUNCTION_WORDS["en"] - FUNCTION_WORDS["pt"],
    "pt": FUNCTION_WORDS["pt"] - FUNCTION_WORDS["en"],
}
# Words that ask rather than name a topic ("explain the difference between..."), and quiz phrasing
# ("Which statement best describes...", "Which of the following is true...").
_QUESTION_WORDS = """
    use used using mean means meaning explain describe tell show give work works happen happens
    difference example examples way ways thing things get gets make makes like need
    following best statement statements describes explanation true false correct incorrect
    explique significa exemplo diferença fazer faz
"""
STOP_WORDS = FUNCTION_WORDS["en"] | FUNCTION_WORDS["pt"] | frozenset(_QUESTION_WORDS.split())

_WORD = re.compile(r"\w+")
_PT_DIACRITICS = re.compile(r"[ãõçâêôáéíóúà]")


def words(text: str) -> list[str]:
    """The text's words (runs of letters, digits and underscores), case-folded, in order."""
    return _WORD.findall(text.casefold())


def content_words(text: str, *, numbers: bool = False) -> list[str]:
    """Words of 3+ characters that are not stop words, in order, without repeats; numbers only when
    asked for (an answer's "3" must be in its source, but a question's "3" names no topic)."""
    seen: dict[str, None] = {}
    for word in words(text):
        if word.isdigit():
            if numbers:
                seen.setdefault(word, None)
        elif len(word) >= 3 and word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def stem(word: str) -> str:
    """A crude prefix stem: the word less three letters, never under five ('strings' -> 'strin',
    'configure' -> 'config', 'mutáveis' -> 'mutáv'); words of five letters or fewer stay whole.

    Snowball (what Postgres's english/portuguese configurations use) was tried and loses matches
    this needs: course text abbreviates ('vec' for 'vector', 'mut' for 'mutable', 'iter' for
    'iterator'), and Portuguese snowball leaves 'mutável' and 'mutáveis' apart."""
    return word if len(word) <= 5 else word[: max(5, len(word) - 3)]


def covers(word: str, tokens: Iterable[str]) -> bool:
    """Whether one of the tokens is the word or a longer form of it: a token starts with its stem
    ('string' covers 'strings', 'vec' is covered by 'vector'). A number must occur exactly."""
    if word.isdigit():
        return word in tokens
    prefix = stem(word)
    return any(token.startswith(prefix) for token in tokens)


def term_coverage(text: str, other: str) -> float | None:
    """Share of `text`'s content words (numbers included) found in `other`, 0..1; None when `text`
    has none (e.g. a bare symbol). Found: `other` covers the term, or the term is a longer form of
    one of `other`'s content words ('ownership' in a question, 'owner' in its answer): either of two
    texts compared may hold the longer form, while the QA gate wants a chunk to hold the question's
    words themselves (`covers`)."""
    terms = content_words(text, numbers=True)
    if not terms:
        return None
    tokens = set(words(other))
    roots = {stem(word) for word in content_words(other)}
    found = sum(
        covers(term, tokens) or (not term.isdigit() and any(term.startswith(root) for root in roots))
        for term in terms
    )
    return found / len(terms)


_ANY_FUNCTION_WORD = FUNCTION_WORDS["en"] | FUNCTION_WORDS["pt"]


def subject_terms(text: str) -> list[str]:
    """Words that can name a subject: numbers, and words of three letters or more that are not function
    words. Not content_words: its stop words also drop quiz phrasing ("difference", "statement"),
    which an answer on the subject repeats (agents/question_evaluator/topical.py)."""
    return [w for w in words(text) if w.isdigit() or (len(w) >= 3 and w not in _ANY_FUNCTION_WORD)]


def same_term(word: str, other: str) -> bool:
    """The same word or a close form of it ('string'/'strings', 'owner'/'ownership'). Stricter than
    covers (a five-letter prefix), under which 'complete' is on the subject of "two's
    complement"; a word under four letters only as itself ('out' is not 'output')."""
    short, long = sorted((word, other), key=len)
    return short == long or (len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 4)


# Sentences. A sentence ends at . ! ? … (and any closing quote or bracket) followed by white space,
# and at every line break; with clauses, also at ; and :. Never inside "1.0" or "std::io", nor after
# an abbreviation ("e.g. this") or a numbered list's "1." at the start of a line. Extracted text
# that glued sentences together ("end.Start") is split there only when asked (glued): the same rule
# would cut code such as "collections.Counter".
_CLOSERS = "\"'”’)\\]"
_SENTENCE_END = re.compile(rf"[.!?…][{_CLOSERS}]*(?=\s)|\n")
_CLAUSE_END = re.compile(rf"[.!?…;:][{_CLOSERS}]*(?=\s)|\n")
_GLUED_END = re.compile(rf"[.!?][{_CLOSERS}]*(?=[A-ZÀ-Ý][a-zà-ÿ])")
_ENDS_SENTENCE = re.compile(rf"[.!?…][{_CLOSERS}]*$")
_ABBREVIATIONS = frozenset("e.g i.e cf vs al fig eq approx ex p.ex dr mr mrs ms prof sr sra pág cap".split())  # noqa: SIM905
_LIST_NUMBER = re.compile(r"\s*\d+\.")


def _continues(text: str, start: int, cut: int) -> bool:
    """Whether text[start:cut] only looks like a sentence: it ends in an abbreviation, or it is a
    list number at the start of a line."""
    piece = text[start:cut]
    if piece.endswith("\n"):
        return False
    last = piece.rsplit(None, 1)[-1] if piece.strip() else ""
    if last.lower().lstrip("(\"'“‘[").rstrip(".") in _ABBREVIATIONS:
        return True
    return (start == 0 or text[start - 1] == "\n") and _LIST_NUMBER.fullmatch(piece) is not None


def sentence_pieces(text: str, *, clauses: bool = False, glued: bool = False) -> list[str]:
    """The text cut into sentences exactly as written: white space kept (a line break ends the piece
    it closes, other white space opens the next), so that "".join(pieces) == text."""
    cuts = {match.end() for match in (_CLAUSE_END if clauses else _SENTENCE_END).finditer(text)}
    if glued:
        cuts.update(match.end() for match in _GLUED_END.finditer(text))
    pieces: list[str] = []
    start = 0
    for cut in sorted(cuts):
        if 0 < cut < len(text) and not _continues(text, start, cut):
            pieces.append(text[start:cut])
            start = cut
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def split_sentences(text: str, *, clauses: bool = False, glued: bool = False) -> list[str]:
    """The text's sentences, stripped, empty ones left out."""
    return [piece.strip() for piece in sentence_pieces(text, clauses=clauses, glued=glued) if piece.strip()]


def sentence_ends(text: str) -> list[int]:
    """The offsets just past each sentence's closing punctuation (where a text may be cut whole)."""
    ends: list[int] = []
    offset = 0
    for piece in sentence_pieces(text):
        body = piece.rstrip()
        if _ENDS_SENTENCE.search(body):
            ends.append(offset + len(body))
        offset += len(piece)
    return ends


# Language. Long texts (a document) are counted; short ones (a question, an answer) weigh markers
# and Portuguese diacritics.
def detect_language(text: str, *, sample_chars: int = 20_000) -> str:
    """'pt', 'en' or 'auto' (undecided: under 20 words, or no language's markers clearly ahead)."""
    found = [word for word in words(text[:sample_chars]) if word.isalpha()]
    if len(found) < 20:
        return "auto"
    counts = {lang: sum(word in markers for word in found) for lang, markers in MARKERS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    other = min(counts.values())
    if counts[best] < 0.05 * len(found) or counts[best] < 1.5 * other:
        return "auto"
    return best


def guess_language(text: str, default: str = "auto") -> Language:
    """'pt' or 'en' for a text of any length, a question of five words included: a long text is
    detected as above; else the markers count, each Portuguese diacritic counts two (English has
    none), and a tie goes to `default` if that is a language, else to English."""
    folded = text.casefold()
    if len(words(folded)) >= 20:
        detected = detect_language(folded)
        if detected in ("pt", "en"):
            return "pt" if detected == "pt" else "en"
    found = words(folded)
    pt = sum(word in MARKERS["pt"] for word in found) + 2 * len(_PT_DIACRITICS.findall(folded))
    en = sum(word in MARKERS["en"] for word in found)
    if pt != en:
        return "pt" if pt > en else "en"
    return "pt" if default == "pt" else "en"


def is_portuguese(text: str) -> bool:
    return guess_language(text, "en") == "pt"
