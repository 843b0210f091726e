"""The confidence calibration: applied to signals, fitted out of fold, stored per model pair."""

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from core.confidence import Calibration, KindModel, calibration_for, chat_model_key, save_calibration
from core.confidence.fit import Sample, choose_thresholds, fit_calibration, nested_labels, oof_probabilities
from core.confidence.model import MISSING, UNCALIBRATED
from core.settings import Settings
from evals.calibration.metrics import ece, label_figures
from evals.calibration.samples import qa_samples

MODEL = KindModel(
    features=("margin", "self_yes"),
    means=(0.5, 0.5),
    scales=(0.2, 0.2),
    coefficients=(2.0, 1.0),
    intercept=0.0,
    high_min=0.9,
    low_below=0.3,
)


def test_a_missing_signal_leaves_no_probability_and_labels_follow_the_thresholds() -> None:
    calibration = Calibration("chat", "embed", {"choice": MODEL})
    assert calibration.assess("choice", {"margin": 0.5, "self_yes": 0.5}).p == pytest.approx(0.5)
    # An endpoint that sent no log-probabilities: the fit rests on self_yes, so no label from it.
    unread = calibration.assess("choice", {"margin": 0.5})
    assert unread.p is None and unread.label == "medium"
    assert unread.reason is not None and unread.reason.startswith(MISSING) and "self_yes" in unread.reason
    # A signal a reply lacks by design (a short answer's support) takes its mean, as fitted.
    answer = KindModel(("support", "question_in_source"), (0.5, 0.5), (0.2, 0.2), (1.0, 1.0), 0.0, 0.9, 0.1)
    short = Calibration("chat", "embed", {"answer": answer}).assess("answer", {"question_in_source": 0.5})
    assert short.p == pytest.approx(0.5) and short.reason is None
    sure = calibration.assess("choice", {"margin": 0.95, "self_yes": 0.9})
    assert sure.label == "high" and sure.p is not None and sure.p >= 0.9
    unsure = calibration.assess("choice", {"margin": 0.1, "self_yes": 0.2})
    assert unsure.label == "low" and unsure.signals == {"margin": 0.1, "self_yes": 0.2}
    assert calibration.assess("choice", {"margin": 0.6, "self_yes": 0.5}).label == "medium"


def test_an_unfitted_kind_or_model_pair_is_medium_without_a_probability() -> None:
    assert (
        Calibration("chat", "embed", {"choice": MODEL}).assess("answer", {"support": 1.0}).label == "medium"
    )
    unfitted = Calibration("chat", "embed").assess("choice", {})
    assert unfitted.p is None and unfitted.reason == f"{UNCALIBRATED} chat"


def test_thresholds_keep_high_precise_and_low_mostly_wrong() -> None:
    p = [0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.4, 0.3, 0.2, 0.1]
    right = [True, True, True, True, False, True, False, False, True, False]
    high_min, low_below = choose_thresholds(p, right)
    assert high_min == 0.8  # the four above are all right; adding 0.7 drops to 0.8 precision
    # The largest cut with the replies under it right at most 35% of the time: the six at or below
    # 0.7 are right twice; the seven at or below 0.8 would be three of seven (0.43).
    assert low_below == pytest.approx(0.7)
    assert choose_thresholds([0.9, 0.8, 0.7], [False, True, False])[0] > 1.0  # never high


def synthetic(n: int, seed: int = 3) -> list[Sample]:
    """A signal that tells right from wrong, one that is noise."""
    rng = random.Random(seed)
    samples = []
    for i in range(n):
        right = rng.random() < 0.55
        informative = rng.gauss(0.7 if right else 0.35, 0.15)
        samples.append(
            Sample(
                str(i), "g / multiple_choice", "choice", {"margin": informative, "noise": rng.random()}, right
            )
        )
    return samples


def test_fitting_out_of_fold_separates_right_from_wrong_and_labels_unseen_replies() -> None:
    samples = synthetic(120)
    p = oof_probabilities(samples, ("margin", "noise"))
    right = [s.right for s in samples]
    mean_right = sum(v for v, ok in zip(p, right, strict=True) if ok) / sum(right)
    mean_wrong = sum(v for v, ok in zip(p, right, strict=True) if not ok) / (len(right) - sum(right))
    assert mean_right > mean_wrong + 0.3
    assert ece(p, right) < 0.15
    _, labels = nested_labels(samples, ("margin", "noise"))
    figures = label_figures(samples, labels, answerable=len(samples))
    assert figures.high > 10 and figures.high_precision is not None and figures.high_precision >= 0.85
    fitted = fit_calibration(samples, chat_model="c", embedding_model="e", fitted_on="synthetic")
    # The noise pays nothing out of fold: the fit leaves it out, and a reply need not compute it.
    assert fitted.kinds["choice"].features == ("margin",) and fitted.kinds["choice"].coefficients[0] > 0.5
    assert fitted.needs("choice", "margin") and not fitted.needs("choice", "noise")


def test_a_kind_whose_signals_pay_nothing_is_fitted_as_its_share_right_and_computes_none() -> None:
    rng = random.Random(3)
    samples = [
        Sample(
            str(i), "g / multiple_choice", "choice", {"self_yes": rng.random(), "closed_p": rng.random()}, ok
        )
        for i, ok in enumerate(rng.random() < 0.55 for _ in range(80))
    ]
    fitted = fit_calibration(samples, chat_model="c", embedding_model="e", fitted_on="synthetic")
    model = fitted.kinds["choice"]
    assert model.features == ()
    share = sum(s.right for s in samples) / len(samples)
    assert fitted.assess("choice", {"self_yes": 0.99}).p == pytest.approx(share, abs=1e-3)
    assert {fitted.assess("choice", {"self_yes": v}).label for v in (0.0, 0.5, 1.0)} == {"medium"}
    assert not fitted.needs("choice", "self_yes") and not fitted.needs("choice", "closed_p")
    # A kind with no fit is "medium" whatever its signals say: none is asked, unless a run records them.
    assert not fitted.needs("answer", "self_yes")
    assert replace(fitted, all_signals=True).needs("choice", "self_yes")
    stored = Calibration.from_dict(json.loads(json.dumps(fitted.as_dict())))
    assert stored.kinds["choice"].features == () and not stored.needs("choice", "self_yes")


def test_a_derived_signal_keeps_what_it_is_derived_from() -> None:
    model = KindModel(("check_gap", "score_extremity"), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0), 0.0, 0.9, 0.1)
    calibration = Calibration("c", "e", {"grade": model})
    assert calibration.needs("grade", "verdict_yes") and calibration.needs("grade", "score")
    assert not calibration.needs("grade", "self_yes")


def test_a_calibration_file_in_the_data_dir_wins_and_an_external_model_is_keyed_by_its_host(
    tmp_path: Path,
) -> None:
    calibration = Calibration("embedded/m", "e", {"choice": MODEL}, source="fitted")
    save_calibration(tmp_path / "calibration", calibration)
    loaded = calibration_for("embedded/m", "e", tmp_path)
    assert loaded.kinds["choice"] == MODEL and loaded.source.startswith("file: ")
    assert not calibration_for("embedded/m", "other-embedding", tmp_path).calibrated
    embedded = Settings(_env_file=None)
    hosted = Settings(
        _env_file=None, LLM_BASE_URL="http://gpu.school:8000/v1", LLM_MODEL="qwen2.5-coder-1.5b-instruct"
    )
    assert chat_model_key(embedded) == "embedded/qwen2.5-coder-1.5b-instruct"
    assert chat_model_key(hosted) == "gpu.school:8000/qwen2.5-coder-1.5b-instruct"
    # studyAI's own model server elsewhere (compose's and Kubernetes' model service), said so by name.
    model_service = Settings(
        _env_file=None, LLM_BASE_URL="http://model:8080/v1", LLM_MODEL="embedded/qwen2.5-coder-1.5b-instruct"
    )
    assert chat_model_key(model_service) == "embedded/qwen2.5-coder-1.5b-instruct"


def test_scored_records_become_samples_and_unanswered_ones_only_count_as_asked(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    rows = [
        {
            "case_id": "a",
            "dataset": "rust-book",
            "kind": "multiple_choice",
            "confidence": {"signals": {"margin": 0.9}},
            "answer_right": True,
        },
        {"case_id": "b", "dataset": "rust-book", "kind": "absent", "confidence": None, "answer_right": None},
        {
            "case_id": "c",
            "dataset": "faquad",
            "kind": "extractive",
            "confidence": {"signals": {"support": 0.2}},
            "answer_right": False,
            "error": None,
        },
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    samples, asked = qa_samples([path])
    assert [(s.kind, s.right) for s in samples] == [("choice", True), ("answer", False)]
    assert asked == {"rust-book / multiple_choice": 1, "rust-book / absent": 1, "faquad / extractive": 1}
