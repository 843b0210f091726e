"""Groundedness judge knobs: how much of each chunk the judge reads and how many sentences it checks."""

from dataclasses import dataclass


@dataclass(frozen=True)
class JudgeConfig:
    # Per chunk in the prompt: the judge needs the sentences the answer drew on, and on the local 1.5B
    # model every token of prefill costs ~10 ms; five chunks of 700 characters stay under ~1,000 tokens.
    chunk_chars: int = 700
    # Sentences checked one by one; past this the rest is checked as one (bounds the reply's length).
    max_sentences: int = 6
    # A second call per sentence the first called supported: the claim against its quote alone.
    second_look: bool = True
