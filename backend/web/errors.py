"""The one place a domain's refusal (core/errors.py) becomes an HTTP answer: `{"detail": sentence}` (with
`code`, `params` and `message` where it was raised with a core.messages.Text: backend/web/language.py) with
the status of its kind (the first of the error's classes found here), as FastAPI's HTTPException would,
and Retry-After where the refusal says when to retry."""

from fastapi import FastAPI, Request, status
from fastapi.responses import JSONResponse

from backend.web.language import refusal_body
from core import errors
from core.accounts.passwords import WeakPassword

STATUS: dict[type[Exception], int] = {
    errors.WrongCredentials: status.HTTP_401_UNAUTHORIZED,
    errors.NotAllowed: status.HTTP_403_FORBIDDEN,
    errors.NotFound: status.HTTP_404_NOT_FOUND,
    errors.Conflict: status.HTTP_409_CONFLICT,
    errors.Gone: status.HTTP_410_GONE,
    errors.TooLarge: status.HTTP_413_CONTENT_TOO_LARGE,
    errors.UnsupportedType: status.HTTP_415_UNSUPPORTED_MEDIA_TYPE,
    errors.Unprocessable: status.HTTP_422_UNPROCESSABLE_CONTENT,
    errors.TooMany: status.HTTP_429_TOO_MANY_REQUESTS,
    errors.UpstreamFailed: status.HTTP_502_BAD_GATEWAY,
    errors.Unavailable: status.HTTP_503_SERVICE_UNAVAILABLE,
    errors.StorageFull: status.HTTP_507_INSUFFICIENT_STORAGE,
    WeakPassword: status.HTTP_422_UNPROCESSABLE_CONTENT,
}


def status_of(error: Exception) -> int:
    for kind in type(error).__mro__:
        if kind in STATUS:
            return STATUS[kind]
    raise TypeError(f"{type(error).__name__} has no HTTP status")  # a new error kind without a status


async def _answer(request: Request, error: Exception) -> JSONResponse:
    retry_after = getattr(error, "retry_after_s", None)
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    # A refusal raised with a Text also answers its code and the sentence in the person's language.
    return JSONResponse(refusal_body(request, error), status_code=status_of(error), headers=headers)


def add_refusal_handlers(app: FastAPI) -> None:
    app.add_exception_handler(errors.Refusal, _answer)
    app.add_exception_handler(WeakPassword, _answer)
