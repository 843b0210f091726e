"""Which Postgres text-search configuration a document's chunks use.

The language is detected by core.text.words (a count of function words that only one language has);
anything unclear falls back to 'simple', which stems nothing and so never stems wrongly."""

from core.text.words import detect_language

__all__ = ["TS_CONFIG", "detect_language", "resolve_language"]

TS_CONFIG = {"pt": "portuguese", "en": "english", "auto": "simple"}


def resolve_language(project_language: str, text: str) -> str:
    return project_language if project_language in ("pt", "en") else detect_language(text)
