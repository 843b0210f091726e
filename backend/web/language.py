"""Which language a refusal is said in, and the body that says it.

The person's language: the project's where the refusal concerns one (a service marks it,
core.messages.concerning; a project's routes note it, `note_project_language`), else the first of
English and Portuguese the request's Accept-Language asks for (the web app sends the language it shows),
else English. A refusal's body keeps its English `detail` (what programs have always read) and adds the
stable `code`, its `params` and `message`, the sentence in the person's language."""

from collections.abc import Iterable
from typing import Any

from starlette.requests import Request
from starlette.types import Scope

from core.messages import DEFAULT_LANGUAGE, LANGUAGES, Text, language_of, text_of

PROJECT_LANGUAGE = "project_language"  # in the request's state: the language of the project it concerns


def accepted_language(header: str | None) -> str:
    """The first of LANGUAGES an Accept-Language header prefers (`pt-BR;q=0.9, en;q=0.8` -> pt)."""
    ranked: list[tuple[float, int, str]] = []
    for order, part in enumerate((header or "").split(",")):
        tag, _, quality = part.strip().partition(";")
        primary = tag.strip().lower().split("-")[0]
        if primary not in LANGUAGES:
            continue
        weight = 1.0
        if quality.strip().startswith("q="):
            try:
                weight = float(quality.strip()[2:])
            except ValueError:
                continue
        if weight > 0:
            ranked.append((-weight, order, primary))
    return min(ranked)[2] if ranked else DEFAULT_LANGUAGE


def note_project_language(request: Request, language: str) -> None:
    """The request concerns a project in `language` (`auto`: none in particular)."""
    if language in LANGUAGES:
        setattr(request.state, PROJECT_LANGUAGE, language)


def scope_language(scope: Scope, error: BaseException | None = None) -> str:
    """The person's language for a request, from its ASGI scope (middleware has no Request)."""
    if error is not None and (marked := language_of(error)) is not None:
        return marked
    project = scope.get("state", {}).get(PROJECT_LANGUAGE)
    if project in LANGUAGES:
        return str(project)
    return accepted_language(_header(scope.get("headers") or [], b"accept-language"))


def request_language(request: Request, error: BaseException | None = None) -> str:
    return scope_language(request.scope, error)


def said(detail: Any, language: str) -> dict[str, Any]:
    """A refusal body's fields for `detail`: with a Text, its code, params and message too."""
    if not isinstance(detail, Text):
        return {"detail": detail}
    message = detail.said_in(language)
    return {"detail": str(detail), "code": detail.code, "params": detail.params, "message": message}


def refusal_body(request: Request, error: BaseException) -> dict[str, Any]:
    """`{"detail", "code", "params", "message"}` for an error raised with a Text, else `{"detail"}`."""
    text = text_of(error)
    return said(text if text is not None else str(error), request_language(request, error))


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin-1")
    return None
