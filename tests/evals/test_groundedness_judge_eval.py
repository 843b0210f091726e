"""The groundedness judge eval without a model: cases built from the real SciFact csv (labels, balance,
determinism, dev/test split) and the scoring with a fake judge."""

from pathlib import Path

import pytest

from agents.groundedness import Judgement
from core.llm.structured import StructuredOutputError
from evals.groundedness_judge import (
    Case,
    Evidence,
    build_cases,
    load_evidence,
    run_cases,
    score,
    split_sentences,
)

SCIFACT = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "scifact"

pytestmark = pytest.mark.skipif(not SCIFACT.exists(), reason="shared SciFact data not present")


@pytest.fixture(scope="module")
def evidence() -> list[Evidence]:
    return load_evidence(SCIFACT)


def test_sentences_split_where_the_corpus_joined_them() -> None:
    text = "BACKGROUND Rats sleep.   \nRESULTS Mice ran 3.5 km (p<0.05).They rested.   CONCLUSION Done."
    assert split_sentences(text) == [
        "BACKGROUND Rats sleep.",
        "RESULTS Mice ran 3.5 km (p<0.05).",
        "They rested.",
        "CONCLUSION Done.",
    ]


def test_evidence_sentences_are_the_cited_ones(evidence: list[Evidence]) -> None:
    # Claim 2 ("1 in 5 million in UK have abnormal PrP positivity.") is contradicted by sentence 4 of
    # its abstract, the overall prevalence: 493 per million.
    prp = next(e for e in evidence if e.claim_id == "2")
    assert prp.label == "CONTRADICT"
    assert prp.sentences["13734012"] == (
        "RESULTS Of the 32,441 appendix samples 16 were positive for abnormal PrP, indicating an overall"
        " prevalence of 493 per million population (95% confidence interval 282 to 801 per million).",
    )
    assert len(evidence) == 505  # every train claim with evidence: each sentence index resolves


def test_cases_are_balanced_labelled_and_deterministic(evidence: list[Evidence]) -> None:
    cases = build_cases(evidence, n=40, seed=3)
    assert [c.kind for c in cases].count("supported") == 20
    assert [c.kind for c in cases].count("contradicted") == 10
    assert [c.kind for c in cases].count("unrelated") == 10
    assert sum(c.supported for c in cases) == 20
    assert cases == build_cases(evidence, n=40, seed=3)
    assert cases != build_cases(evidence, n=40, seed=4)
    by_id = {e.claim_id: e for e in evidence}
    for case in cases:
        assert case.chunks and all(chunk.text for chunk in case.chunks)
        assert [chunk.id for chunk in case.chunks] == list(range(1, len(case.chunks) + 1))
        source = by_id[case.claim_id]
        own = {" ".join(sentences) for sentences in source.sentences.values()}
        if case.kind == "unrelated":
            assert not own & {chunk.text for chunk in case.chunks}
        else:
            assert {chunk.text for chunk in case.chunks} == own
            assert source.label == ("SUPPORT" if case.kind == "supported" else "CONTRADICT")
    assert len({c.claim_id for c in cases}) == len(cases)


def test_dev_and_test_splits_do_not_share_claims(evidence: list[Evidence]) -> None:
    dev = build_cases(evidence, n=30, seed=0, split="dev")
    test = build_cases(evidence, n=120, seed=0, split="test")
    assert all(int(c.claim_id) % 5 == 0 for c in dev)
    assert not {c.claim_id for c in dev} & {c.claim_id for c in test}


async def test_scoring_with_a_fake_judge(evidence: list[Evidence]) -> None:
    cases = build_cases(evidence, n=8, seed=1)

    async def judge(case: Case) -> Judgement:
        # Right on supported and contradicted cases, fooled by unrelated evidence (grounded 0.5).
        value = 0.5 if case.kind == "unrelated" else 1.0 if case.supported else 0.0
        return Judgement(
            claims=[], groundedness=value, relevance=1.0, hallucination_risk=1 - value, flagged=False
        )

    strict = score(await run_cases(cases, judge, grounded_from=1.0))
    assert strict.cases == 8 and strict.accuracy == 1.0 and strict.recall_unsupported == 1.0
    lenient = score(await run_cases(cases, judge, grounded_from=0.5))
    assert lenient.accuracy == 6 / 8
    assert lenient.recall_unsupported == 2 / 4
    assert lenient.accuracy_by_kind == {"supported": 1.0, "contradicted": 1.0, "unrelated": 0.0}
    assert lenient.failures == 0 and lenient.mean_latency_s >= 0


async def test_a_failing_judge_counts_as_wrong(evidence: list[Evidence]) -> None:
    async def judge(case: Case) -> Judgement:
        raise StructuredOutputError("garbage")

    scores = score(await run_cases(build_cases(evidence, n=4, seed=0), judge, grounded_from=1.0))
    assert scores.failures == 4 and scores.accuracy == 0.0
