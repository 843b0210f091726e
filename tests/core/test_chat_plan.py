"""The chat model's derived defaults, decided once (core/runtime/chat_plan.py), and what a worker is told."""

from typing import Any

from core.runtime import ChatModelPlan
from core.runtime.services import ServiceUrls
from core.settings import Settings

EMBEDDED_URL = "http://127.0.0.1:41000/v1"


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def urls(llm_base_url: str | None) -> ServiceUrls:
    return ServiceUrls("postgresql://db/studyai", "redis://cache:6379/0", llm_base_url)


def test_the_embedded_server_admits_its_slots_and_gets_the_llama_grammar_and_tells_its_workers() -> None:
    plan = ChatModelPlan.decide(settings(llm_base_url=None), urls(EMBEDDED_URL))
    assert (plan.embedded, plan.concurrency, plan.structured_mode) == (True, 4, "llama-grammar")
    assert plan.child_environment() == {
        "LLM_BASE_URL": EMBEDDED_URL,
        "LLM_CONCURRENCY": "4",
        "LLM_STRUCTURED_OUTPUT": "llama-grammar",
    }
    configured = settings(llm_base_url=None, llm_concurrency=3, llm_structured_output="json_schema")
    chosen = ChatModelPlan.decide(configured, urls(EMBEDDED_URL))
    assert chosen.child_environment()["LLM_CONCURRENCY"] == "3"
    assert chosen.child_environment()["LLM_STRUCTURED_OUTPUT"] == "json_schema"


def test_the_embedded_server_admits_one_call_per_slot() -> None:
    plan = ChatModelPlan.decide(settings(llm_base_url=None, llm_slots=2), urls(EMBEDDED_URL))
    assert plan.concurrency == 2 and plan.child_environment()["LLM_CONCURRENCY"] == "2"


def test_an_external_model_is_the_workers_own_setting() -> None:
    remote = settings(llm_base_url="http://model:8080/v1")
    plan = ChatModelPlan.decide(remote, urls("http://model:8080/v1"))
    # json_schema for any external endpoint: one without it gets the schema in the instructions instead
    # (core/llm/refusals.py, tests/backend/test_model_conformance.py).
    assert (plan.embedded, plan.concurrency, plan.structured_mode) == (False, 4, "json_schema")
    assert plan.child_environment() == {"LLM_BASE_URL": "http://model:8080/v1"}
    openai = settings(llm_base_url="https://api.openai.com/v1")
    assert ChatModelPlan.for_url(openai, openai.llm.base_url).structured_mode == "json_schema"


def test_no_chat_model_tells_the_workers_nothing() -> None:
    plan = ChatModelPlan.decide(settings(llm_base_url=None), urls(None))
    assert plan.base_url is None and plan.child_environment() == {}
