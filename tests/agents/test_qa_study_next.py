"""Which questions ask what to study next (answered from mastery) and which are about the material."""

import pytest

from agents.qa.study_next import asks_what_to_study, study_next_reply


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("What should I study next?", "en"),
        ("so what do I need to review before the exam", "en"),
        ("Which topics should I review for the exam?", "en"),
        ("what should i focus on now?", "en"),
        ("O que devo estudar agora?", "pt"),
        ("E o que eu preciso revisar para a prova?", "pt"),
        ("Que tópicos devo revisar?", "pt"),
        ("What should I study about ownership?", None),  # names a subject: a question for the material
        ("What is a lifetime?", None),
        ("O que devo estudar sobre listas em Python?", None),
    ],
)
def test_only_a_question_about_the_askers_own_study_is_one(question: str, language: str | None) -> None:
    assert asks_what_to_study(question) == language


def test_the_reply_lists_the_weakest_topics_and_cites_their_items_sources() -> None:
    topics = [
        {"topic": ["Book", "Lifetimes"], "mastery": 0.12, "items": 2, "studied": 1, "attempts": 2,
         "next_items": [{"question": "Why?", "source_chunk_ids": [7, 8]},
                        {"question": "How?", "source_chunk_ids": [7]}]},
        {"topic": ["Book", "Borrowing"], "mastery": 0.8, "items": 1, "studied": 1, "attempts": 1,
         "next_items": [{"question": "When?", "source_chunk_ids": [3]}]},
    ]  # fmt: skip
    reply = study_next_reply(topics, "en")
    assert reply.has_answer and reply.chunk_ids == [7, 3]  # each item's first source, once
    first = "1. Book › Lifetimes: mastery 12% (1 of 2 items studied, 2 graded attempts)"
    assert reply.answer.splitlines()[1] == first
    assert "“Why?”; “How?”" in reply.answer
    empty = study_next_reply([], "pt")
    assert not empty.has_answer and empty.chunk_ids == [] and "nenhum flashcard" in empty.answer
