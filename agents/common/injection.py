"""Hostile text in what the models read: instructions hidden in a document's passages or in a student's
answer, addressed to the model rather than to a human reader.

The prompts put such text in delimited data blocks and tell the model it is data, but a 1.5B model
follows a confident imperative anyway, so the application does not rely on that alone: the sentences
that address the model are taken out before the model reads them (`screen`), and what the model
replies is checked afterwards by the application (citations only from shown passages, a grade capped
by agreement with the reference, an answer that quotes its own instructions withheld).

The patterns are deliberately narrow (English and Portuguese): they name the model's instructions,
its prompt, its output or the grade; course text *about* prompt injection keeps its descriptive
sentences, only its imperatives to "ignore previous instructions" and the like are screened."""

import functools
import re
from dataclasses import dataclass

from core.text.words import sentence_pieces

_FLAGS = re.IGNORECASE | re.UNICODE

# Addressed to any model: override, reveal, role-play.
_COMMON = [
    # "ignore all previous instructions", "disregard the above", "forget your rules"
    r"\b(ignore|disregard|forget|override)\b[^.!?\n]{0,40}\b(instructions?|prompts?|directions|guidelines"
    r"|(the|everything|all)\s+(text\s+)?above|your\s+rules"
    r"|(all\s+)?(previous|prior|earlier|preceding)\s+(instructions?|text|messages?|rules|context))\b",
    # Portuguese: "ignore as instruções anteriores", "desconsidere tudo acima", "esqueça suas regras"
    r"\b(ignore|ignora|ignorem|desconsidere|desconsidera|esqueça|esqueca|esqueçam)\b[^.!?\n]{0,40}"
    r"(instruç|instruc|(tudo|o\s+texto)\s+acima|regras\s+anteriores|suas\s+regras|o\s+que\s+(foi\s+)?dito)",
    r"\b(system|developer|initial|hidden|secret)\s+(prompt|instructions?)\b",
    r"\b(prompt|instruç\w*)\s+(do|de)\s+sistema\b",
    r"\b(reveal|print|show|repeat|output|display|leak)\b[^.!?\n]{0,30}\byour\s+(instructions?|prompt|rules)\b",
    r"\b(revele|revela|mostre|mostra|imprima|repita|exiba)\b[^.!?\n]{0,30}"
    r"\b(suas|seu|tuas|teu)\s+(instruç\w*|prompt|regras)",
    r"\b(new|updated)\s+instructions?\s*:",
    r"\bnovas\s+instruç\w*\s*:",
    r"\byou\s+are\s+now\s+(a|an|in|the|my)\b",
    r"\b(assistant|chatbot|llm|language model|ai model)\s*[,:]\s*(you|please|ignore|answer|respond)\b",
    r"^\s*(system|assistant)\s*:\s*(you|ignore|new|from now|always|answer|respond)",
    r"\b(attention|note|message)\s+(to|for)\s+(the\s+)?(ai|assistant|model|llm|grader|chatbot)\b",
    r"\b(atenção|atencao|nota|mensagem)\s+(ao|à|a|para\s+o|para\s+a)\s+"
    r"(ia|assistente|modelo|avaliador|corretor)\b",
]

# Addressed to the QA model: what to cite, what to answer whatever the question.
_DOCUMENT = [
    r"\b(cite|quote|reference)\b[^.!?\n]{0,20}\b(chunk|excerpt|passage|source)\s*(id\s*)?#?\s*\d+",
    r"\b(cite|citar|cita)\b[^.!?\n]{0,20}\b(trecho|chunk|fonte|excerto|passagem)\s*(id\s*)?#?\s*\d+",
    r"\b(answer|respond\s+to|reply\s+to)\s+(every|each|all|any)\s+(\w+\s+)?(questions?|query|queries|requests?)"
    r"\s+(with|by\s+saying|using\s+only)\b",
    r"\b(always|only)\s+(answer|respond|reply)\s+(with|by\s+saying)\b",
    r"\b(answer|respond|reply)\s+(only|always)\s+with\b",
    r"\bwhatever\s+(the\s+)?(question|user)\b[^.!?\n]{0,40}\b(answer|respond|reply|say)\b",
    r"\b(responda|responder|respondam)\b[^.!?\n]{0,20}\b(toda|todas|qualquer|cada)\s+(as\s+)?perguntas?\b"
    r"[^.!?\n]{0,20}\bcom\b",
    r"\b(sempre|apenas|somente)\s+(responda|diga|escreva)\b",
    r"\b(responda|diga|escreva)\s+(sempre|apenas|somente)\b",
    r"\bseja\s+qual\s+for\s+a\s+pergunta\b",
]

# Addressed to the grader: a verdict, a score, full marks.
_GRADER = [
    r"\bverdict\b[^.!?\n]{0,20}\b(correct|partially_correct|incorrect|right|pass)\b",
    r"\bveredito\b[^.!?\n]{0,20}\b(corret[ao]|certo|aprovad[ao])\b",
    r"\b(score|grade)\s*(of|is|=|:|to|as|should\s+be|must\s+be)?\s*(1(\.0+)?|100\s*%|10\s*/\s*10|full|max\w*)"
    r"(?!\w|\.\d)",
    r"\b(nota|pontuação|pontuacao)\s*(de|é|=|:|deve\s+ser)?\s*(1(\.0+)?|100\s*%|10|máxima|maxima|total)(?!\w|\.\d)",
    r"\b(mark|grade|rate|count|treat|consider|evaluate|score)\s+(this|my|the|that)\s+(answer|response|reply"
    r"|submission)\s+(as\s+)?(fully\s+)?(correct|right)\b",
    r"\b(marque|avalie|considere|trate|corrija)\s+(esta|minha|a|essa)\s+resposta\s+como\s+(corret|cert)",
    r"\b(give|award|assign)\b[^.!?\n]{0,30}\b(full|maximum|max|perfect|top)\s+(marks?|score|credit|grade|points)\b",
    r"\b(dê|atribua|conceda)\b[^.!?\n]{0,30}\b(nota|pontuação|pontuacao)\s+(máxima|maxima|total|10)\b",
    r"\bgrader\b",
    # How the answer should be marked: the rubric or answer key, full or maximum marks, leniency.
    r"\b(rubric|gabarito)\b",
    r"\b(full|maximum|max|perfect|top)\s+(marks?|score|credit|grade|points)\b",
    r"\b(nota|pontuação|pontuacao)\s+(máxima|maxima|cheia|total)\b",
    r"\b(graded|marked|corrected)\s+(leniently|generously)\b|\bbe\s+(lenient|generous)\b",
    r"\b(score|grade|mark|rate|evaluate)\s+(this|it|me)\b[^.!?\n]{0,20}(\d+\s*%|correct|right|full|high)",
    # A forged prompt: a "Reference answer:" label, or a statement of the outcome.
    r"^\s*(reference|expected)\s+answer\s*:",
    r"^\s*(resposta\s+de\s+referência|resposta\s+esperada)\s*:",
    r"\b(the\s+)?student('s)?\s+answer\s+is\s+(fully\s+|completely\s+)?(correct|right)\b",
    r"\ba\s+resposta\s+do\s+aluno\s+está\s+(totalmente\s+)?(corret|cert)",
    r"(\"score\"|\"verdict\"|\bpartially_correct\b)",
]

_COMMON_RE = [re.compile(p, _FLAGS) for p in _COMMON]
_DOCUMENT_RE = [re.compile(p, _FLAGS) for p in _DOCUMENT]
_GRADER_RE = [re.compile(p, _FLAGS) for p in _GRADER]

PASSAGE_MARK = "[text addressed to the assistant removed]"


@dataclass(frozen=True)
class Screened:
    text: str  # what remains for the model to read
    removed: tuple[str, ...]  # the sentences that addressed the model

    @property
    def hostile(self) -> bool:
        return bool(self.removed)


def _matches(sentence: str, patterns: list[re.Pattern[str]]) -> bool:
    return any(pattern.search(sentence) for pattern in patterns)


def _screen(text: str, patterns: list[re.Pattern[str]], mark: str) -> Screened:
    kept: list[str] = []
    removed: list[str] = []
    # Sentences as written, so that the kept ones join back into the text unchanged; a hostile
    # clause takes its whole sentence with it.
    for sentence in sentence_pieces(text):
        if sentence.strip() and _matches(sentence, patterns):
            removed.append(sentence.strip())
            if mark and (not kept or kept[-1].strip() != mark):  # one mark for a run of removed sentences
                lead = sentence[: len(sentence) - len(sentence.lstrip())]
                kept.append(lead + mark + ("\n" if sentence.endswith("\n") else ""))
        else:
            kept.append(sentence)
    return Screened(text="".join(kept).strip(), removed=tuple(removed))


def screen_passage(text: str) -> Screened:
    """A document passage with its sentences that address the model replaced by a visible mark."""
    return _screen(text, _COMMON_RE + _DOCUMENT_RE, PASSAGE_MARK)


def screen_answer(text: str) -> Screened:
    """A student's answer without its sentences that address the grader (nothing left in their place:
    the grade is then that of the answer without them)."""
    return _screen(text, _COMMON_RE + _GRADER_RE, "")


def data_block(tag: str, text: str) -> str:
    """`text` between <tag> and </tag>, with any opening or closing tag of that name inside it defused,
    so the data cannot close its own block and speak outside it."""
    defused = re.sub(rf"<(\s*/?\s*{re.escape(tag)})", r"‹\1", text, flags=re.IGNORECASE)
    return f"<{tag}>\n{defused}\n</{tag}>"


_WORDS = re.compile(r"\w+")


@functools.lru_cache(maxsize=32)
def _shingles(instructions: str, run: int) -> frozenset[tuple[str, ...]]:
    words = [w.casefold() for w in _WORDS.findall(instructions)]
    return frozenset(tuple(words[i : i + run]) for i in range(len(words) - run + 1))


def quotes_instructions(reply: str, instructions: str, *, run: int = 6) -> bool:
    """Whether the reply repeats `run` consecutive words of the instructions (a leaked system prompt)."""
    said = [w.casefold() for w in _WORDS.findall(reply)]
    shingles = _shingles(instructions, run)
    return any(tuple(said[i : i + run]) in shingles for i in range(len(said) - run + 1))
