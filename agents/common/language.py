"""The language a user wrote a question in, so agents answer in it.

`core.text.words.guess_language` decides: a long text is detected like a document, a short one (a
question is often five words) by its function words and Portuguese diacritics; the project's
language breaks a tie, and English is the last resort."""

from core.text.words import Language, guess_language

_NAMES = {"pt": "Portuguese", "en": "English"}


def question_language(text: str, project_language: str = "auto") -> Language:
    """'pt' or 'en'."""
    return guess_language(text, project_language)


def language_name(language: str) -> str:
    return _NAMES.get(language, "English")
