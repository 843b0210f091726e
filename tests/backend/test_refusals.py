"""Every domain's refusals reach the client the same way (backend/web/errors.py): each kind of
core/errors.py has its one status, the body is `{"detail": sentence}`, and a refusal that says when to
retry carries Retry-After."""

import inspect

import httpx
import pytest
from fastapi import FastAPI

from backend.accounts import errors as account_errors
from backend.web.errors import add_refusal_handlers, status_of
from core import errors

KINDS = [kind for _, kind in inspect.getmembers(errors, inspect.isclass) if issubclass(kind, errors.Refusal)]
ACCOUNT_KINDS = [
    kind
    for _, kind in inspect.getmembers(account_errors, inspect.isclass)
    if issubclass(kind, account_errors.AccountError) and kind is not account_errors.AccountError
]


@pytest.mark.parametrize("kind", [k for k in KINDS if k is not errors.Refusal] + ACCOUNT_KINDS)
def test_every_refusal_kind_has_one_status(kind: type[errors.Refusal]) -> None:
    assert 400 <= status_of(kind("why")) < 600


def test_a_refusal_without_a_kind_has_no_status() -> None:
    with pytest.raises(TypeError, match="no HTTP status"):
        status_of(errors.Refusal("no kind"))


async def test_a_refusal_is_answered_with_its_sentence_and_retry_time() -> None:
    app = FastAPI()
    add_refusal_handlers(app)

    @app.get("/budget")
    async def budget() -> None:
        raise errors.TooMany("You uploaded 2 GB in the last hour. Retry later.", retry_after_s=600)

    @app.get("/viewer")
    async def viewer() -> None:
        raise account_errors.NotAllowed("Viewers cannot change this project.")

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        budget_reply, viewer_reply = await http.get("/budget"), await http.get("/viewer")
    assert budget_reply.status_code == 429
    assert budget_reply.headers["retry-after"] == "600"
    assert budget_reply.json() == {"detail": "You uploaded 2 GB in the last hour. Retry later."}
    assert viewer_reply.status_code == 403
    assert "retry-after" not in viewer_reply.headers
    assert viewer_reply.json() == {"detail": "Viewers cannot change this project."}
