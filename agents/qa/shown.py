"""Which passages the student reads first, while the model works: those the answer will most likely rest
on, so the wait is spent on the right page.

The answer model reads the best `answer_chunks` chunks; its answer cites the one whose sentence states
the answer, and a multiple-choice reply quotes the chunk whose sentence states the chosen option best
(agents/qa/choose.py). So of those chunks, the ones shown first are those whose best sentence holds the
most of the question's words (with options: of any one option with the stem), ties in retrieval order.
On the development questions this made the first cited passage one of the two shown in 80 of 90 cited
answers against 72 of 90 for the two best-ranked chunks (evals/reports/qa-dev.md, "first cited shown")."""

from agents.qa.evidence import best_sentence
from agents.qa.options import parse_choice
from core.retrieval import Candidate


def shown_first(chunks: list[Candidate], question: str, count: int) -> list[Candidate]:
    """The `count` chunks of `chunks` (the ones the answer model reads, in rank order) to show first."""
    choice = parse_choice(question)
    abouts = [question] if choice is None else [f"{option} {choice.stem}" for option in choice.options]

    def stated(chunk: Candidate) -> float:
        return max(best_sentence(chunk.text, about)[1] for about in abouts)

    ranked = sorted(enumerate(chunks), key=lambda item: (-stated(item[1]), item[0]))
    return [chunk for _, chunk in ranked[:count]]
