"""A refusal is said in the person's language (core/messages, backend/web/language.py): its body keeps the
English `detail` programs read and adds a stable `code`, its `params` and `message`, the sentence in the
project's language where the refusal concerns one (a class's join page, its uploads), else in the first
of English and Portuguese the request's Accept-Language asks for, else in English."""

import copy
import pickle
import string
import time
from typing import Any
from uuid import uuid4

import httpx
import pytest
from fastapi import FastAPI, HTTPException

from backend.middleware.body_limit import BodyLimitMiddleware
from backend.middleware.input_errors import add_input_error_handlers
from backend.middleware.model_errors import add_model_error_handlers
from backend.middleware.rate_limits import RateLimited, Verdict, rate_limited_handler
from backend.web.language import accepted_language
from core.accounts.passwords import hash_password
from core.llm.admission import AdmissionRejected
from core.messages import MESSAGES, Text
from core.runtime.disk import UPLOAD_DISK_FULL
from core.speech.voices import NoVoice
from core.store.accounts import accounts
from core.store.runs.history import AGENTS
from tests.backend.conftest import Api
from tests.bank import draft, store, unit_vector
from tests.conftest import Caller, UserFactory, changed_settings, create_project, upload

PASSWORD = "correct horse battery staple 42"
COMMON = "password123456"
PT = {"Accept-Language": "pt-BR,pt;q=0.9,en;q=0.8"}
EN = {"Accept-Language": "en-GB,en;q=0.9"}
TOO_COMMON_EN = "This password is too common: choose one that others are unlikely to use."
TOO_COMMON_PT = "Essa senha é comum demais: escolha uma que outras pessoas dificilmente usariam."


def new_email(name: str = "person") -> str:
    return f"{name}-{time.time_ns()}@school.example"


def assert_said(response: httpx.Response, status: int, code: str, language: str) -> dict[str, Any]:
    """The refusal's status and code, its English detail, and its message in `language`."""
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code, body
    text = Text(code, **body["params"])
    assert body["detail"] == str(text) == text.said_in("en")
    assert body["message"] == text.said_in(language), body
    return dict(body)


# The sentences ---------------------------------------------------------------------------------


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(MESSAGES))
def test_every_sentence_is_in_both_languages_with_the_same_params(code: str) -> None:
    said = MESSAGES[code]
    assert set(said) == {"en", "pt"} and all(text.strip() for text in said.values())
    # Portuguese may leave out a parameter English has (an English-only reason), never add one.
    assert _fields(said["pt"]) <= _fields(said["en"]), code


def test_a_text_is_its_english_sentence_and_survives_a_copy() -> None:
    text = Text("password.too_short", min_length=12)
    assert text == "The password is too short: use at least 12 characters."
    assert text.said_in("pt") == "A senha é curta demais: use pelo menos 12 caracteres."
    assert text.said_in("fr") == str(text)  # a language the catalog lacks: English
    for again in (copy.deepcopy(text), pickle.loads(pickle.dumps(text))):
        assert again == text and again.code == text.code and again.params == text.params
    # The English of a sentence kept elsewhere as a constant, unchanged.
    assert Text("upload.disk_full", reason="No space left") == f"{UPLOAD_DISK_FULL} (No space left)"
    # NoVoice's own sentence, which the audio route answers as this code.
    assert Text("audio.no_voice", language="Portuguese") == str(NoVoice("pt"))


@pytest.mark.parametrize(
    ("header", "language"),
    [
        (None, "en"),
        ("", "en"),
        ("pt-BR", "pt"),
        ("pt-BR,pt;q=0.9,en-US;q=0.8,en;q=0.7", "pt"),
        ("en-GB,en;q=0.9,pt;q=0.8", "en"),
        ("fr-FR,fr;q=0.9,pt;q=0.5,en;q=0.4", "pt"),  # the first language the server speaks
        ("en;q=0.2, pt;q=0.8", "pt"),  # by weight, not by place
        ("de, *;q=0.5", "en"),
        ("pt;q=0, en", "en"),  # q=0: not acceptable
        ("pt;q=nonsense, en", "en"),
    ],
)
def test_the_accept_language_header_picks_english_or_portuguese(header: str | None, language: str) -> None:
    assert accepted_language(header) == language


# Sign-up, sign-in, password change --------------------------------------------------------------


async def test_a_refused_password_is_said_in_the_browsers_language_english_by_default(api: Api) -> None:
    email = new_email()
    async with api.browser(timeout=120) as http:
        with changed_settings(api.app, SIGNUP_ENABLED=True):
            plain = await http.post("/auth/signup", json={"email": email, "password": COMMON})
            english = await http.post("/auth/signup", json={"email": email, "password": COMMON}, headers=EN)
            portuguese = await http.post(
                "/auth/signup", json={"email": email, "password": COMMON}, headers=PT
            )
            short = await http.post("/auth/signup", json={"email": email, "password": "short1"}, headers=PT)
            own = await http.post("/auth/signup", json={"email": email, "password": email}, headers=PT)
    for response in (plain, english):
        body = assert_said(response, 422, "password.too_common", "en")
        assert body["detail"] == body["message"] == TOO_COMMON_EN and body["params"] == {}
    body = assert_said(portuguese, 422, "password.too_common", "pt")
    assert body["detail"] == TOO_COMMON_EN and body["message"] == TOO_COMMON_PT
    body = assert_said(short, 422, "password.too_short", "pt")
    minimum = api.app.state.runtime.settings.accounts.password_min_length
    assert body["params"] == {"min_length": minimum}
    assert body["message"] == f"A senha é curta demais: use pelo menos {minimum} caracteres."
    assert_said(own, 422, "password.is_email", "pt")


async def test_sign_up_off_wrong_sign_in_and_password_change_in_portuguese(api: Api, db: Any) -> None:
    email = new_email("pt")
    made = await accounts.create_account(db, email=email, password_hash=hash_password(PASSWORD))
    assert made is not None
    async with api.browser(timeout=120) as http:
        off = await http.post("/auth/signup", json={"email": new_email(), "password": PASSWORD}, headers=PT)
        assert_said(off, 403, "signup.off", "pt")
        wrong = await http.post("/auth/login", json={"email": email, "password": "not it at all"}, headers=PT)
        assert_said(wrong, 401, "signin.wrong_credentials", "pt")
        assert wrong.json()["message"] == "E-mail ou senha incorretos."
        signed = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        csrf = {"X-CSRF-Token": signed.json()["csrf_token"]}
        change = {"current_password": PASSWORD, "new_password": COMMON}
        weak = await http.post("/me/password", json=change, headers={**csrf, **PT})
        assert_said(weak, 422, "password.too_common", "pt")
        change = {"current_password": "not the password", "new_password": "a long new passphrase 9"}
        mistaken = await http.post("/me/password", json=change, headers={**csrf, **PT})
        assert_said(mistaken, 403, "password.wrong_current", "pt")


# Joining a class --------------------------------------------------------------------------------


async def invitation(http: httpx.AsyncClient, owner: Caller, project_id: str, **body: Any) -> dict[str, Any]:
    response = await http.post(f"/projects/{project_id}/invitations", json=body, headers=owner)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_portuguese_class_refuses_in_portuguese_whatever_the_browser_asks(
    api: Api, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Genética", language="pt")
    made = await invitation(api.http, owner, project_id, max_uses=1)
    preview = await api.http.get(f"/join/{made['code']}", headers=EN)
    assert preview.status_code == 200 and preview.json()["project_language"] == "pt"
    async with api.browser(timeout=120) as http:
        body = {"code": made["code"], "email": new_email("aluno"), "password": COMMON}
        for headers in ({}, EN):  # the class's language, not the browser's
            weak = await http.post("/join/signup", json=body, headers=headers)
            said = assert_said(weak, 422, "password.too_common", "pt")
            assert said["detail"] == TOO_COMMON_EN and said["message"] == TOO_COMMON_PT
        joined = await http.post("/join/signup", json={**body, "password": PASSWORD}, headers=EN)
        assert joined.status_code == 201 and joined.json()["outcome"] == "joined", joined.text
    # The one use is spent: the class is full, and says so in its language.
    full = await api.http.get(f"/join/{made['code']}", headers=EN)
    assert_said(full, 410, "join.used_up", "pt")
    late = await make_user("late")
    refused = await api.http.post("/join", json={"code": made["code"]}, headers={**late, **PT})
    assert_said(refused, 410, "join.used_up", "pt")


async def test_join_refusals_without_a_class_follow_the_browser(api: Api, make_user: UserFactory) -> None:
    owner, student = await make_user("teacher"), await make_user("student")
    project_id = await create_project(api.http, owner, name="Chemistry", language="en")
    made = await invitation(api.http, owner, project_id)
    wrong = await api.http.get("/join/ZZZZZ-ZZZZZ", headers=PT)  # no class known: the browser's language
    assert_said(wrong, 404, "join.no_such_invitation", "pt")
    assert wrong.json()["message"] == "Este convite não existe ou já expirou."
    assert_said(await api.http.get("/join/ZZZZZ-ZZZZZ"), 404, "join.no_such_invitation", "en")
    first = await api.http.post("/join", json={"code": made["code"]}, headers=student)
    again = await api.http.post("/join", json={"code": made["code"]}, headers=student)
    assert (first.json()["outcome"], again.json()["outcome"]) == ("joined", "member")
    async with api.browser(timeout=120) as http:
        taken = {"code": made["code"], "email": student.email, "password": PASSWORD}
        refused = await http.post("/join/signup", json=taken, headers=PT)
        assert_said(refused, 409, "join.email_taken", "en")  # an English class: its language wins


# Uploads ----------------------------------------------------------------------------------------


async def test_upload_refusals_in_the_projects_language(api: Api, make_user: UserFactory) -> None:
    owner, viewer = await make_user("teacher"), await make_user("student")
    project_id = await create_project(api.http, owner, name="Física", language="pt")
    made = await invitation(api.http, owner, project_id, role="viewer")
    assert (await api.http.post("/join", json={"code": made["code"]}, headers=viewer)).status_code == 200
    empty = await upload(api.http, {**owner, **EN}, project_id, "empty.md", b"")
    assert_said(empty, 422, "upload.empty", "pt")
    gif = await upload(api.http, {**owner, **EN}, project_id, "cat.gif", b"GIF89a" + b"\x00" * 64)
    body = assert_said(gif, 415, "upload.unsupported_type", "pt")
    assert "GIF" in body["detail"] and body["message"].startswith("Este arquivo não é de um tipo")
    refused = await upload(api.http, {**viewer, **EN}, project_id, "notes.md", b"# Notes\n\nText.")
    assert_said(refused, 403, "project.viewers_cannot_change", "pt")
    english = await create_project(api.http, owner, name="Physics", language="en")
    assert_said(await upload(api.http, {**owner, **PT}, english, "e.md", b""), 422, "upload.empty", "en")
    auto = await create_project(api.http, owner, name="Any", language="auto")
    assert_said(await upload(api.http, {**owner, **PT}, auto, "e.md", b""), 422, "upload.empty", "pt")


async def test_a_body_over_the_cap_is_refused_in_the_browsers_language() -> None:
    app = FastAPI()
    app.add_middleware(BodyLimitMiddleware, upload_bytes=1024 * 1024, json_bytes=4096)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        pad = b"x" * 8192
        response = await http.post(
            "/projects/p/qa", content=pad, headers={**PT, "Content-Type": "text/plain"}
        )
        body = assert_said(response, 413, "upload.body_too_large", "pt")
        assert body["message"] == "O corpo da requisição passa do limite de 4 KB."
        big = b"x" * (1024 * 1024 + 70 * 1024)
        response = await http.post("/projects/p/documents", content=big, headers=PT)
        assert assert_said(response, 413, "upload.too_large", "pt")["params"] == {"limit": "1 MB"}


# Asking: a full queue, a rate limit ---------------------------------------------------------------


async def test_a_full_queue_and_a_rate_limit_are_said_in_the_browsers_language() -> None:
    app = FastAPI()
    add_model_error_handlers(app)
    add_input_error_handlers(app)
    app.add_exception_handler(RateLimited, rate_limited_handler)

    @app.post("/qa")
    async def full() -> None:
        raise AdmissionRejected(retry_after=7, waiting=12)

    @app.post("/limited")
    async def limited() -> None:
        raise RateLimited(
            Verdict(allowed=False, limit=10, remaining=0, reset_after=30), Text("rate.user_limited")
        )

    @app.get("/gone")
    async def gone() -> None:
        raise HTTPException(404, Text("project.not_found"))

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as http:
        queue = await http.post("/qa", headers=PT)
        body = assert_said(queue, 429, "qa.queue_full", "pt")
        assert body["params"] == {"waiting": 12, "retry_after": 7} and queue.headers["Retry-After"] == "7"
        assert body["message"] == "A fila do modelo está cheia (12 esperando); tente de novo em 7 s."
        assert body["detail"] == str(AdmissionRejected(retry_after=7, waiting=12))  # as before
        assert_said(await http.post("/qa"), 429, "qa.queue_full", "en")
        limited_reply = await http.post("/limited", headers=PT)
        assert_said(limited_reply, 429, "rate.user_limited", "pt")
        assert limited_reply.headers["Retry-After"] == "30"
        assert_said(await http.get("/gone", headers=PT), 404, "project.not_found", "pt")


# A project's plans, study items, cited versions and history ------------------------------------------


async def test_plans_items_versions_and_history_refuse_in_the_projects_language(
    api: Api, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    project_id = await create_project(api.http, owner, name="Biologia", language="pt")
    english = {**owner, **EN}  # the project's language wins over the browser's

    plan = await api.http.get(f"/projects/{project_id}/plans/{uuid4()}", headers=english)
    body = assert_said(plan, 404, "plan.not_found", "pt")
    assert (body["detail"], body["message"]) == ("Plan not found.", "Plano não encontrado.")

    item = draft("What does DNA carry?", "Genetic information.", unit_vector())
    row = await store(api.app, project_id, owner.id, item)
    url = f"/projects/{project_id}/questions/{row.id}"
    nothing = await api.http.patch(url, json={}, headers=english)
    body = assert_said(nothing, 422, "question.nothing_to_change", "pt")
    assert body["detail"] == (
        "Nothing to change: give status, question, answer, distractors, explanation or difficulty."
    )
    assert body["message"] == (
        "Nada para alterar: informe o status, a pergunta, a resposta, os distratores, a explicação ou a"
        " dificuldade."
    )
    wrong = await api.http.patch(url, json={"distractors": ["RNA", "Lipids", "Sugar"]}, headers=english)
    body = assert_said(wrong, 422, "question.no_distractors", "pt")
    assert body["params"] == {"type": "short_answer"}
    assert body["detail"] == "A short_answer item has no distractors."
    assert body["message"] == "Um item do tipo short_answer não tem distratores."
    missing = await api.http.patch(f"/projects/{project_id}/questions/{uuid4()}", json={}, headers=english)
    assert assert_said(missing, 404, "question.not_found", "pt")["message"] == "Questão não encontrada."

    versions = f"/projects/{project_id}/documents/{uuid4()}/versions/1"
    half = await api.http.get(f"{versions}/pages/1/highlight", params={"char_start": 5}, headers=english)
    body = assert_said(half, 422, "version.bad_range", "pt")
    assert body["detail"] == "Send char_start ≤ char_end, or neither."
    assert body["message"] == "Envie char_start ≤ char_end, ou nenhum dos dois."
    gone = await api.http.get(f"{versions}/text", headers=english)
    body = assert_said(gone, 404, "version.not_found", "pt")
    assert (body["detail"], body["message"]) == (
        "Document version not found.",
        "Versão do documento não encontrada.",
    )

    agent = await api.http.get(f"/projects/{project_id}/queries", params={"agent": "oracle"}, headers=english)
    body = assert_said(agent, 422, "history.unknown_agent", "pt")
    assert body["params"] == {"agents": ", ".join(AGENTS)}
    assert body["message"] == f"`agent` precisa ser um destes: {', '.join(AGENTS)}."


async def test_a_converted_refusal_follows_the_browser_where_the_project_leaves_it(
    api: Api, make_user: UserFactory
) -> None:
    owner = await make_user("teacher")
    auto = await create_project(api.http, owner, name="Any", language="auto")
    portuguese = await api.http.get(f"/projects/{auto}/notes/no-such-job", headers={**owner, **PT})
    body = assert_said(portuguese, 404, "note.job_not_found", "pt")
    assert (body["detail"], body["message"]) == ("Note job not found.", "Tarefa da nota não encontrada.")
    plain = await api.http.get(f"/projects/{auto}/notes/no-such-job", headers=owner)
    body = assert_said(plain, 404, "note.job_not_found", "en")
    assert body["message"] == body["detail"] == "Note job not found."
    english = await create_project(api.http, owner, name="Physics", language="en")
    refused = await api.http.get(f"/projects/{english}/jobs/no-such-job", headers={**owner, **PT})
    assert assert_said(refused, 404, "job.not_found", "en")["message"] == "Job not found."
