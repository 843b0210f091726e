"""The passages shown first: of the chunks the answer model reads, those whose sentence states the question
(or, with options, an option) best, ties in retrieval order."""

from agents.qa.shown import shown_first
from core.retrieval import Candidate


def chunk(chunk_id: int, text: str) -> Candidate:
    return Candidate(chunk_id=chunk_id, row={"text": text})


CHUNKS = [
    chunk(1, "Rust has a strong type system. Types are checked at compile time."),
    chunk(2, "Cargo is the build tool. It fetches crates."),
    chunk(3, "When the owner goes out of scope, the value is dropped. Memory is freed then."),
    chunk(4, "Each value has an owner. There can only be one owner at a time."),
]


def test_the_chunks_stating_the_question_come_first_not_the_best_ranked() -> None:
    shown = shown_first(CHUNKS, "What happens to the value when its owner goes out of scope?", 2)
    ids = [c.chunk_id for c in shown]
    assert ids[0] == 3 and len(ids) == 2 and not {1, 2} & set(ids)


def test_ties_keep_the_retrieval_order() -> None:
    shown = shown_first(CHUNKS, "Something no passage mentions at all?", 2)
    assert [c.chunk_id for c in shown] == [1, 2]


def test_with_options_the_chunk_stating_an_option_comes_first() -> None:
    question = (
        "What does Cargo do?\n"
        "A. It checks borrowing at run time\n"
        "B. It fetches crates as the build tool"
    )
    shown = shown_first(CHUNKS, question, 2)
    # Chunk 2 states option B; chunk 1 only touches option A; 3 and 4 state neither.
    assert [c.chunk_id for c in shown] == [2, 1]
