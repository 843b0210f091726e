"""A quiz question pasted with its options ("A) ...", "B) ..."): a choice, never an ambiguity.

The wrong options' words are absent from the material by design, so whether the material covers the
question is judged on its stem; the options themselves are scored, not regenerated."""

import re
from dataclasses import dataclass

_OPTION_LINE = re.compile(r"^[ \t]*\(?([A-Ha-h])[).:][ \t]+(\S.*)$", re.MULTILINE)
_OPTIONS_HEADER = re.compile(r"\n\s*(options|alternativas|choices|opções)\s*:?\s*$", re.IGNORECASE)
CHOICE_INSTRUCTION = "Which option is correct? Give its letter and explain."


@dataclass(frozen=True)
class Choice:
    stem: str  # the question without its options
    letters: tuple[str, ...]  # as the user wrote them, upper-cased: ("A", "B", "C", "D")
    options: tuple[str, ...]  # each option's text, in the order shown
    instruction: str  # what followed the options ("Which option is correct? ..."), if anything


def parse_choice(question: str) -> Choice | None:
    """The question's stem and options when it lists two or more consecutive lettered options
    (A, B, C...); None for a question without them."""
    found = list(_OPTION_LINE.finditer(question))
    letters = [m.group(1).upper() for m in found]
    if len(found) < 2 or letters != [chr(ord("A") + i) for i in range(len(letters))]:
        return None
    stem = _OPTIONS_HEADER.sub("", question[: found[0].start()].rstrip()).strip()
    # An option runs to the next option line (code options span lines); the last one to a blank line.
    ends = [m.start() for m in found[1:]]
    last_start = found[-1].start(2)
    blank = question.find("\n\n", last_start)
    ends.append(len(question) if blank < 0 else blank)
    options = tuple(question[m.start(2) : end].strip() for m, end in zip(found, ends, strict=True))
    instruction = question[ends[-1] :].strip()
    return Choice(stem or question, tuple(letters), options, instruction)


def question_stem(question: str) -> str:
    """The text before the options of a question that has them; the question itself otherwise."""
    choice = parse_choice(question)
    return question if choice is None else choice.stem


def choice_question(stem: str, options: list[str]) -> str:
    """A question with its options as a student pastes it (and parse_choice reads it)."""
    shown = "\n".join(f"{chr(ord('A') + i)}) {option}" for i, option in enumerate(options))
    return f"{stem}\n\nOptions:\n{shown}\n\n{CHOICE_INSTRUCTION}"
