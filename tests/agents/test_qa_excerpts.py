"""The answer prompt's excerpts: one budget shared by the shown chunks, the sentences that bear on it."""

from agents.qa.config import DEFAULT_CONFIG, qa_config
from agents.qa.excerpts import best_window, select
from agents.qa.support import answer_support
from core.settings.agents import QaSettings

FILLER = "Unrelated filler words about nothing in particular here. "
OWNERSHIP = (
    FILLER * 6
    + "When a String's owner goes out of scope, Rust calls drop and the heap memory is returned. "
    + "This happens automatically at the closing curly bracket. "
    + FILLER * 6
)
BORROWING = FILLER * 3 + "A reference borrows a value without taking ownership of the String. " + FILLER * 3
CLOSURES = FILLER * 8


def test_windows_share_one_budget_and_hold_the_best_sentences() -> None:
    question = "What happens to a String when its owner goes out of scope?"
    windows = select([OWNERSHIP, BORROWING, CLOSURES], question, 500, chunk_chars=700)
    assert sum(len(w) for w in windows) <= 500
    assert "owner goes out of scope" in windows[0]
    assert "closing curly bracket" in windows[0]  # grown forwards from the best sentence
    assert "borrows a value" in windows[1]
    assert len(windows) == 3


def test_a_larger_budget_shows_more_and_no_chunk_passes_its_cap() -> None:
    question = "What happens to a String when its owner goes out of scope?"
    small = select([OWNERSHIP, BORROWING, CLOSURES], question, 400, chunk_chars=700)
    large = select([OWNERSHIP, BORROWING, CLOSURES], question, 2000, chunk_chars=300)
    assert sum(map(len, large)) > sum(map(len, small))
    assert all(len(w) <= 300 for w in large)


def test_a_chunk_without_room_is_left_out_but_the_first_is_always_shown() -> None:
    long_sentence = "The owner of a String " + "really " * 80 + "drops it."
    windows = select([long_sentence, BORROWING], "Who drops a String?", 120, chunk_chars=700)
    assert windows[0].startswith("The owner of a String") and len(windows[0]) <= 120
    assert windows[1] == ""


def test_best_window_of_one_chunk() -> None:
    window = best_window(OWNERSHIP, "When is heap memory returned?", 200)
    assert "heap memory is returned" in window and len(window) <= 200
    assert best_window("Short text.", "anything", 200) == "Short text."


def test_answer_support_counts_the_answers_own_words_found_in_the_excerpts() -> None:
    question = "What happens to a String when its owner goes out of scope?"
    drawn = "Rust calls drop and the heap memory is returned at the closing curly bracket."
    known = "The garbage collector eventually finalizes the string object and reclaims it."
    assert answer_support(drawn, question, OWNERSHIP, min_words=4) == 1.0
    assert answer_support(known, question, OWNERSHIP, min_words=4) == 0.0
    assert answer_support("It is dropped.", question, OWNERSHIP, min_words=4) is None  # too short to judge


def test_the_deployment_overrides_the_budgets_and_the_support_share() -> None:
    assert qa_config(QaSettings()) == DEFAULT_CONFIG
    custom = qa_config(
        QaSettings(
            QA_CONTEXT_CHARS=4000, QA_CHOICE_CONTEXT_CHARS=5000, QA_SUPPORT_MIN=0.0,
            QA_CHOICE_EXPLAIN="model", QA_CHOICE_ORDERS=1,
        )  # type: ignore[call-arg]
    )  # fmt: skip
    assert (custom.context_chars, custom.choice_context_chars, custom.support_min) == (4000, 5000, 0.0)
    assert (custom.choice_explain, custom.choice_orders) == ("model", 1)
