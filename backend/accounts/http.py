"""The one place the accounts domain's refusals become HTTP answers: `{"detail": sentence}` with the
status of its kind (the first of the error's classes found here), as FastAPI's own HTTPException would."""

from fastapi import FastAPI, Request, status
from fastapi.responses import JSONResponse

from backend.accounts import errors
from core.accounts.passwords import WeakPassword

STATUS: dict[type[Exception], int] = {
    errors.WrongCredentials: status.HTTP_401_UNAUTHORIZED,
    errors.NotAllowed: status.HTTP_403_FORBIDDEN,
    errors.NotFound: status.HTTP_404_NOT_FOUND,
    errors.Conflict: status.HTTP_409_CONFLICT,
    errors.Gone: status.HTTP_410_GONE,
    errors.MailFailed: status.HTTP_502_BAD_GATEWAY,
    WeakPassword: status.HTTP_422_UNPROCESSABLE_CONTENT,
}


def status_of(error: Exception) -> int:
    for kind in type(error).__mro__:
        if kind in STATUS:
            return STATUS[kind]
    raise TypeError(f"{type(error).__name__} has no HTTP status")  # a new error kind without a status


async def _answer(request: Request, error: Exception) -> JSONResponse:
    return JSONResponse({"detail": str(error)}, status_code=status_of(error))


def add_account_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(errors.AccountError, _answer)
    app.add_exception_handler(WeakPassword, _answer)
