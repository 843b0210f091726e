"""`studyai users create` prints a key that the API accepts; the key itself is never stored."""

import importlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import psycopg

from core.runtime.services import ServiceUrls
from tests.conftest import studyai


async def test_users_create_prints_a_working_key(
    client: httpx.AsyncClient,
    services: ServiceUrls,
    data_dir: Path,
    db: psycopg.AsyncConnection[dict[str, Any]],
) -> None:
    result = studyai(
        "users", "create", "Ana@Example.org", data_dir=data_dir, database_url=services.database_url
    )
    assert result.returncode == 0, result.stderr
    key = result.stdout.strip().splitlines()[-1]
    assert key.startswith("sk-studyai-")
    response = await client.get("/projects", headers={"Authorization": f"Bearer {key}"})
    assert response.status_code == 200
    stored = await (
        await db.execute("SELECT count(*) AS n FROM api_keys WHERE key_hash = %s", (key,))
    ).fetchone()
    assert stored["n"] == 0
    user = await (await db.execute("SELECT email FROM users WHERE email = 'ana@example.org'")).fetchone()
    assert user is not None


def test_eval_passes_the_suite_its_own_options() -> None:
    shown = studyai("eval", "qa", "--help")
    assert shown.returncode == 0, shown.stderr
    assert "--groundedness" in shown.stdout and "--chapters" in shown.stdout
    unknown = studyai("eval", "nonsense")
    assert unknown.returncode != 0 and "unknown suite" in unknown.stderr


def test_eval_help_lists_the_suites() -> None:
    shown = studyai("eval", "--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "Suites: qa, retrieval, groundedness-judge" in text
    assert "unknown suite" not in shown.stdout + shown.stderr


def test_every_eval_suite_names_a_module_with_a_main() -> None:
    from backend.cli.app import EVAL_SUITES

    for suite, module in EVAL_SUITES.items():
        assert callable(importlib.import_module(module).main), suite


def test_workers_of_an_embedded_model_share_its_slots_and_grammar(monkeypatch: Any) -> None:
    from backend.cli.app import worker_specs
    from core.settings import Settings

    monkeypatch.setenv("PORT", "9999")  # a hosting platform's variable: never handed to a child
    urls = ServiceUrls("postgresql://db/studyai", "redis://cache:6379/0", "http://127.0.0.1:41000/v1")
    embedded = worker_specs(urls, Settings(_env_file=None, LLM_BASE_URL=None))  # type: ignore[call-arg]
    assert [spec.command[-1] for spec in embedded] == ["index", "agents"]
    for spec in embedded:
        assert spec.env["LLM_BASE_URL"] == "http://127.0.0.1:41000/v1"
        assert spec.env["LLM_CONCURRENCY"] == "4" and spec.env["LLM_STRUCTURED_OUTPUT"] == "llama-grammar"
        assert "PORT" not in spec.env

    external = Settings(_env_file=None, LLM_BASE_URL="http://model:8080/v1")  # type: ignore[call-arg]
    for spec in worker_specs(replace(urls, llm_base_url="http://model:8080/v1"), external):
        assert "LLM_CONCURRENCY" not in spec.env and "LLM_STRUCTURED_OUTPUT" not in spec.env
