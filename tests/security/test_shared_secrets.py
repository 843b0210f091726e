"""The deployment's shared state (issue 41), tried as a student and as a teacher who is not an
administrator, over HTTP: the LTI tool's private key (now one row of the database, shared by every
replica) is never in any answer they can reach, only its public half; the worker processes' list is an
administrator's; and no route lets anyone write a confidence calibration (one that labelled every answer
"high" would make wrong answers look settled)."""

import re

import httpx

from tests.security.people import Browser, join_with_new_account, sql, teacher_with_class
from tests.security.stack import Stack

PRIVATE_PARTS = {"d", "p", "q", "dp", "dq", "qi"}


def test_the_tool_key_stays_private_and_workers_are_for_administrators(stack: Stack) -> None:
    teacher, _, code = teacher_with_class(stack)
    student = Browser(stack, "127.0.0.4")
    join_with_new_account(student, code, "curious")

    [key] = student.get("/lti/jwks").json()["keys"]
    assert key["kty"] == "RSA" and not PRIVATE_PARTS & set(key)
    [row] = sql(stack, "SELECT pem FROM deployment_keys WHERE name = 'lti_tool'")
    secret = re.sub(r"-----[A-Z ]+-----|\s", "", row["pem"])[40:80]  # a run of the private key's base64
    for who in (student, teacher):
        for path in ("/lti/jwks", "/lti/config", "/health/ready", "/admin/workers", "/openapi.json"):
            answer = who.get(path)
            assert "PRIVATE KEY" not in answer.text and secret not in answer.text, path

    assert student.get("/admin/workers").status_code == 403
    assert teacher.get("/admin/workers").status_code == 403  # a teacher is not an administrator
    with httpx.Client(base_url=stack.base, timeout=30) as anonymous:
        assert anonymous.get("/admin/workers").status_code == 401

    paths = student.get("/openapi.json").json()["paths"]
    assert not [path for path in paths if "calibrat" in path or "deployment" in path]
