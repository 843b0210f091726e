"""The language a user wrote a question in, so agents answer in it.

`core.language.detect_language` needs ~20 words, and a question is often five. Here the
function words that open or glue questions, and Portuguese diacritics, decide; the project's
language breaks a tie, and English is the last resort."""

import re

from core.language import detect_language

Language = str  # 'pt' or 'en'

_WORD = re.compile(r"[a-zà-ÿ]+")
_PT_MARKS = re.compile(r"[ãõçâêôáéíóú]")
_PT_MARKERS = (
    "o a os as um uma de do da dos das em no na nos nas que qual quais quando onde como por porque"
    " para com sem é são está estão ser foi pode podem fazer faz diferença entre e ou não sim isso"
    " esse essa este esta eu meu minha você mais menos sobre quem quanto quantos também"
)
_EN_MARKERS = (
    "the a an of in on at to for with without is are was were be been do does did what which when"
    " where who why how can could should would will between difference and or not this that these"
    " those it its my your i you more less about than from by"
)
_MARKERS = {"pt": frozenset(_PT_MARKERS.split()), "en": frozenset(_EN_MARKERS.split())}
_NAMES = {"pt": "Portuguese", "en": "English"}


def question_language(text: str, project_language: str = "auto") -> Language:
    """'pt' or 'en'."""
    lowered = text.lower()
    words = _WORD.findall(lowered)
    if len(words) >= 20:
        detected = detect_language(lowered)
        if detected in ("pt", "en"):
            return detected
    scores = {lang: sum(word in markers for word in words) for lang, markers in _MARKERS.items()}
    # Words like "a", "e" and "o" exist in both lists' spirit; diacritics are a strong Portuguese sign.
    scores["pt"] += 2 * len(_PT_MARKS.findall(lowered))
    if scores["pt"] != scores["en"]:
        return "pt" if scores["pt"] > scores["en"] else "en"
    return project_language if project_language in ("pt", "en") else "en"


def language_name(language: Language) -> str:
    return _NAMES.get(language, "English")
