"""A graded attempt as an FSRS review: the verdict and score mapped to a rating.

  incorrect                                        -> 1 Again
  partially_correct                                -> 2 Hard
  correct                                          -> 3 Good
  correct, score >= 0.95, the student's first try  -> 4 Easy

There is no answer time to go by, so "easy" means right at once and (nearly) fully; a correct answer
after earlier tries is only Good."""

from typing import Literal

from fsrs import Rating

Verdict = Literal["correct", "partially_correct", "incorrect"]
EASY_SCORE = 0.95


def rating_for_attempt(verdict: Verdict, score: float, *, first_try: bool) -> Rating:
    if verdict == "incorrect":
        return Rating.Again
    if verdict == "partially_correct":
        return Rating.Hard
    return Rating.Easy if first_try and score >= EASY_SCORE else Rating.Good
