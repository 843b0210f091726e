"""The hostile cases against the real local model (Qwen2.5-Coder-1.5B on llama.cpp), one case per test:
a passage that tries to steer the QA answer model, or an answer that tries to steer the grader. Bounded:
one short model call per document case, at most two per answer case (clean grades are shared), about
four minutes for the whole set on two CPU cores. `python -m evals.security` runs the same cases and
writes the pass rate to evals/reports/security.md."""

from typing import Any

import pytest
from langchain_openai import ChatOpenAI

from evals.harness.security_cases import ANSWER_CASES, DOCUMENT_CASES, AnswerCase, DocumentCase
from evals.harness.security_runs import run_answer_case, run_document_case


@pytest.fixture(scope="module")
def clean_grades() -> dict[tuple[str, str], dict[str, Any]]:
    return {}


@pytest.mark.parametrize("case", DOCUMENT_CASES, ids=lambda c: c.name)
async def test_real_model_document_injection(case: DocumentCase, local_llm: ChatOpenAI) -> None:
    outcome = await run_document_case(case, local_llm)
    assert outcome.passed, (outcome.failures, outcome.detail)


@pytest.mark.parametrize("case", ANSWER_CASES, ids=lambda c: c.name)
async def test_real_model_answer_injection(
    case: AnswerCase, local_llm: ChatOpenAI, clean_grades: dict[tuple[str, str], dict[str, Any]]
) -> None:
    outcome = await run_answer_case(case, local_llm, clean_grades)
    assert outcome.passed, (outcome.failures, outcome.detail)
