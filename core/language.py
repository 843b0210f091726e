"""Which Postgres text-search configuration a document's chunks use.

A stop-word count is enough to tell Portuguese from English course material; anything unclear
falls back to 'simple', which stems nothing and so never stems wrongly."""

import re

_WORD = re.compile(r"[a-zà-ÿ]+")
_STOPWORDS = {
    "pt": frozenset(
        [
            "de",
            "a",
            "o",
            "que",
            "e",
            "do",
            "da",
            "em",
            "um",
            "para",
            "com",
            "não",
            "uma",
            "os",
            "no",
            "se",
            "na",
            "por",
            "mais",
            "as",
            "dos",
            "como",
            "mas",
            "ao",
            "ele",
            "das",
            "à",
            "seu",
            "sua",
            "ou",
            "quando",
            "muito",
            "nos",
            "já",
            "eu",
            "também",
            "só",
            "pelo",
            "pela",
            "até",
            "isso",
            "ela",
            "entre",
            "depois",
            "sem",
            "mesmo",
            "aos",
            "seus",
            "quem",
            "nas",
            "me",
            "esse",
            "eles",
            "você",
            "essa",
            "num",
            "nem",
            "suas",
            "meu",
            "às",
            "minha",
            "numa",
            "pelos",
            "elas",
            "qual",
            "nós",
            "lhe",
            "deles",
            "essas",
            "esses",
            "pelas",
            "este",
            "dele",
            "são",
            "é",
            "função",
            "variável",
            "valor",
        ]
    ),
    "en": frozenset(
        [
            "the",
            "of",
            "and",
            "to",
            "in",
            "is",
            "that",
            "it",
            "for",
            "as",
            "with",
            "was",
            "on",
            "be",
            "by",
            "this",
            "are",
            "or",
            "from",
            "at",
            "an",
            "which",
            "but",
            "not",
            "have",
            "has",
            "can",
            "you",
            "if",
            "will",
            "all",
            "one",
            "we",
            "their",
            "there",
            "what",
            "when",
            "so",
            "its",
            "more",
            "would",
            "into",
            "than",
            "these",
            "they",
            "your",
            "use",
            "how",
            "then",
            "each",
            "other",
            "about",
            "value",
            "function",
        ]
    ),
}
TS_CONFIG = {"pt": "portuguese", "en": "english", "auto": "simple"}


def detect_language(text: str, *, sample_chars: int = 20_000) -> str:
    """'pt', 'en' or 'auto' (undecided)."""
    words = _WORD.findall(text[:sample_chars].lower())
    if len(words) < 20:
        return "auto"
    counts = {lang: sum(word in stop for word in words) for lang, stop in _STOPWORDS.items()}
    best = max(counts, key=lambda lang: counts[lang])
    other = min(counts.values())
    if counts[best] < 0.05 * len(words) or counts[best] < 1.5 * other:
        return "auto"
    return best


def resolve_language(project_language: str, text: str) -> str:
    return project_language if project_language in ("pt", "en") else detect_language(text)
