"""The option scorers compared by evals.choice, with a scripted fake chat model that returns token
log-probabilities as llama.cpp's server does."""

import math

from langchain_core.messages import AIMessage

from agents.qa.options import parse_choice
from core.retrieval import Candidate
from evals.choice import interleaved
from evals.choice_scorers import REASON_ASK, REASON_SYSTEM, both, cloze, grammar_literal, reasoned, rotations
from tests.agents.test_qa_graph import RecordingFake

QUESTION = "What does `cargo build --release` do?\n\nA) It renames the binary\nB) It turns on optimizations"
CHOICE = parse_choice(QUESTION)
EXCERPTS = "Excerpts:\n<excerpts>[1] Ch1: --release compiles with optimizations.</excerpts>"


def tokens(*logprobs: float) -> AIMessage:
    content = [{"token": f"t{i}", "logprob": value, "top_logprobs": []} for i, value in enumerate(logprobs)]
    return AIMessage(content="forced", response_metadata={"logprobs": {"content": content}})


def letters(**probabilities: float) -> AIMessage:
    top = [{"token": letter, "logprob": math.log(p)} for letter, p in probabilities.items()]
    first = max(probabilities, key=lambda letter: probabilities[letter])
    content = [{"token": first, "logprob": 0.0, "top_logprobs": top}]
    return AIMessage(content=first, response_metadata={"logprobs": {"content": content}})


def test_a_grammar_literal_matches_the_text_with_quotes_backslashes_and_newlines_escaped() -> None:
    assert grammar_literal('say "hi"\\\nnow') == 'root ::= "say \\"hi\\"\\\\\\nnow"'


async def test_cloze_scores_each_option_by_the_sum_of_its_forced_tokens_log_probabilities() -> None:
    assert CHOICE is not None
    llm = RecordingFake(responses=[tokens(-0.5, -3.0), tokens(-0.2, -0.3, -0.4)])
    scores = await cloze(llm, EXCERPTS, CHOICE)
    assert scores == [-3.5, -0.2 - 0.3 - 0.4]
    # The options are not shown: the model is asked the stem and its reply is forced to each option.
    for prompt in llm.prompts:
        assert "What does `cargo build --release` do?" in prompt[-1].content
        assert "renames" not in prompt[-1].content


async def test_reasoned_reads_the_letter_after_the_models_own_reasoning_in_the_same_conversation() -> None:
    assert CHOICE is not None
    thought = AIMessage(content="Release builds are optimised, so B.")
    llm = RecordingFake(responses=[thought, letters(A=0.2, B=0.7)])
    scores = await reasoned(llm, EXCERPTS, CHOICE)
    assert scores is not None and scores[1] > scores[0]
    first, second = llm.prompts
    assert first[0].content == REASON_SYSTEM
    assert second[-2].content == thought.content and second[-1].content == REASON_ASK


async def test_rotations_show_every_option_at_every_letter() -> None:
    assert CHOICE is not None
    # Two options: the user's order and the reversed one; the model always prefers the letter A.
    llm = RecordingFake(responses=[letters(A=0.6, B=0.4), letters(A=0.6, B=0.4)])
    probabilities = await rotations(llm, EXCERPTS, CHOICE)
    assert len(llm.prompts) == 2
    assert probabilities == [0.5, 0.5]  # a pure position bias cancels out


def verdict(yes: float) -> AIMessage:
    top = [{"token": "yes", "logprob": math.log(yes)}, {"token": "no", "logprob": math.log(1 - yes)}]
    content = [{"token": "yes", "logprob": 0.0, "top_logprobs": top}]
    return AIMessage(content="yes", response_metadata={"logprobs": {"content": content}})


async def test_both_multiplies_the_letters_and_the_verdicts_probabilities() -> None:
    assert CHOICE is not None
    # The letters, in the production's one order, lean to A (0.6 : 0.4); each option judged alone says B
    # is the answer (0.9 against 0.2): the product picks B.
    llm = RecordingFake(responses=[letters(A=0.6, B=0.4), verdict(0.2), verdict(0.9)])
    probabilities = await both(llm, EXCERPTS, CHOICE)
    assert probabilities is not None and len(llm.prompts) == 1 + 2
    assert math.isclose(probabilities[0], 0.6 * 0.2 / (0.6 * 0.2 + 0.4 * 0.9))
    assert math.isclose(probabilities[1], 0.4 * 0.9 / (0.6 * 0.2 + 0.4 * 0.9))


def test_option_evidence_takes_each_lists_next_chunk_in_turn_once_each_up_to_the_limit() -> None:
    question, first, second = ([Candidate(i) for i in ids] for ids in ([1, 2, 3], [2, 4], [5, 1, 6]))
    assert [c.chunk_id for c in interleaved([question, first, second], 5)] == [1, 2, 5, 4, 3]
    assert [c.chunk_id for c in interleaved([question, first, second], 10)] == [1, 2, 5, 4, 3, 6]
