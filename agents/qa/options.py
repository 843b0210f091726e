"""A quiz question pasted with its options ("A) ...", "B) ..."): the wrong options' words are absent
from the material by design, so whether the material covers the question is judged on its stem."""

import re

_OPTION_LINE = re.compile(r"^\s*\(?[A-Ha-h][).:]\s+\S", re.MULTILINE)
_OPTIONS_HEADER = re.compile(r"\n\s*(options|alternativas|choices)\s*:?\s*$", re.IGNORECASE)


def question_stem(question: str) -> str:
    """The text before the first of two or more option lines; the question itself otherwise."""
    options = list(_OPTION_LINE.finditer(question))
    if len(options) < 2:
        return question
    stem = _OPTIONS_HEADER.sub("", question[: options[0].start()].rstrip())
    return stem.strip() or question
