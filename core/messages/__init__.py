"""The sentences a person reads when the server refuses something, in English and Portuguese.

A refusal's sentence is a `Text`: a `str` (its English sentence, what `detail` has always carried, so
programs and logs see no change) that also knows its stable `code` and `params`, and can be said in the
other language (`Text.said_in`). Services raise it wherever they raised a sentence before; the HTTP layer
(backend/web/language.py) picks the person's language and answers `detail` (English), `code`, `params`
and `message` (the sentence in that language). The sentences themselves: core/messages/catalog.py."""

from collections.abc import Iterator
from contextlib import contextmanager

from core.messages.catalog import MESSAGES

LANGUAGES = ("en", "pt")
DEFAULT_LANGUAGE = "en"
Param = str | int

__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "MESSAGES", "Text", "concerning", "language_of", "text_of"]


class Text(str):
    """A refusal's sentence: the English text, with its `code` and `params` for the other language."""

    code: str
    params: dict[str, Param]

    def __new__(cls, code: str, /, **params: Param) -> "Text":
        text = super().__new__(cls, _render(code, DEFAULT_LANGUAGE, params))
        text.code = code
        text.params = params
        return text

    def __reduce__(self) -> tuple[object, ...]:
        # Copied or pickled as itself: str's own reduction would call __new__ with the English text.
        return (_text, (self.code, self.params))

    def said_in(self, language: str) -> str:
        return _render(self.code, language if language in LANGUAGES else DEFAULT_LANGUAGE, self.params)


def _text(code: str, params: dict[str, Param]) -> Text:
    return Text(code, **params)


def _render(code: str, language: str, params: dict[str, Param]) -> str:
    # A missing code or parameter is a bug in the raise site: KeyError at once, in the tests.
    return MESSAGES[code][language].format(**params)


def text_of(error: BaseException) -> Text | None:
    """The Text an error was raised with (its first argument, or an HTTPException's detail), if any."""
    detail = getattr(error, "detail", None)
    if isinstance(detail, Text):
        return detail
    first = error.args[0] if error.args else None
    return first if isinstance(first, Text) else None


def language_of(error: BaseException) -> str | None:
    """The language a service said the refusal is in (the language of the project it concerns)."""
    language = getattr(error, "language", None)
    return language if language in LANGUAGES else None


@contextmanager
def concerning(language: str | None) -> Iterator[None]:
    """Refusals raised inside concern a project in `language` (`auto`, None: not one): they are said in it,
    whatever the caller's browser asks, e.g. a weak password on the join page of a Portuguese class."""
    try:
        yield
    except Exception as error:
        if language in LANGUAGES and text_of(error) is not None and language_of(error) is None:
            error.language = language  # type: ignore[attr-defined]
        raise
