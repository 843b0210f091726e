"""A script's lines spoken one after another into one mono recording, with where each line starts and
ends (the transcript highlights the line being heard).

Synthesis is CPU-bound and blocking (Piper's ONNX model in this process, espeak-ng as a child process):
the worker calls `render` in a thread. Both engines give 16-bit-range floats at 22,050 Hz; the recording
keeps the engine's own rate."""

import importlib
import io
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import soundfile

from core.speech.voices import ESPEAK_VARIANTS, PIPER_LENGTH_SCALES, Voice

# Silence between two lines of one speaker, and a longer one where the other speaker takes over.
PAUSE_S = 0.35
TURN_PAUSE_S = 0.6
ESPEAK_WORDS_PER_MINUTE = 165  # its default (175) is hurried for study material
ESPEAK_TIMEOUT_S = 60


class Speaker(Protocol):
    sample_rate: int

    def speak(self, text: str, speaker: int) -> np.ndarray:
        """The line as mono float32 samples in [-1, 1]; `speaker` is 0 or 1."""
        ...


@dataclass(frozen=True)
class Rendered:
    samples: np.ndarray  # mono float32
    sample_rate: int
    timings_ms: list[tuple[int, int]]  # each line's start and end

    @property
    def duration_ms(self) -> int:
        return round(1000 * len(self.samples) / self.sample_rate)


class PiperSpeaker:
    """Piper's neural voice from a voice package (its `model_path()` and `config_path()`)."""

    def __init__(self, package: str) -> None:
        from piper import PiperVoice  # imported here: the API, which only looks voices up, never loads it

        voice_package: Any = importlib.import_module(package)
        model: Path = voice_package.model_path()
        self._voice = PiperVoice.load(model, config_path=voice_package.config_path())
        self.sample_rate: int = self._voice.config.sample_rate

    def speak(self, text: str, speaker: int) -> np.ndarray:
        from piper import SynthesisConfig

        config = SynthesisConfig(length_scale=PIPER_LENGTH_SCALES[speaker % len(PIPER_LENGTH_SCALES)])
        parts = [chunk.audio_float_array for chunk in self._voice.synthesize(text, syn_config=config)]
        return np.concatenate(parts).astype(np.float32) if parts else np.zeros(0, np.float32)


class EspeakSpeaker:
    """espeak-ng (a child process per line), a male and a female variant of the language's voice."""

    sample_rate = 22050

    def __init__(self, voice: str) -> None:
        self._voice = voice

    def speak(self, text: str, speaker: int) -> np.ndarray:
        variant = ESPEAK_VARIANTS[speaker % len(ESPEAK_VARIANTS)]
        # The text goes in on stdin, never as an argument: a line starting with "-" is no option.
        command = ["espeak-ng", "-v", f"{self._voice}+{variant}", "-s", str(ESPEAK_WORDS_PER_MINUTE)]
        spoken = subprocess.run(
            [*command, "-b", "1", "--stdin", "--stdout"],
            input=text.encode(),
            capture_output=True,
            timeout=ESPEAK_TIMEOUT_S,
            check=True,
        )
        samples, rate = soundfile.read(io.BytesIO(spoken.stdout), dtype="float32")
        if rate != self.sample_rate:
            raise RuntimeError(f"espeak-ng spoke at {rate} Hz, not {self.sample_rate}")
        mono: np.ndarray = samples if samples.ndim == 1 else samples.mean(axis=1)
        return mono


def open_speaker(voice: Voice) -> Speaker:
    if voice.engine == "piper":
        return PiperSpeaker(voice.name)
    return EspeakSpeaker(voice.name)


class Recording:
    """Lines appended one at a time (the job reports each), with the pauses between them."""

    def __init__(self, sample_rate: int) -> None:
        self.sample_rate = sample_rate
        self._pieces: list[np.ndarray] = []
        self._length = 0
        self._previous: int | None = None
        self.timings_ms: list[tuple[int, int]] = []

    def add(self, samples: np.ndarray, speaker: int) -> None:
        if self._previous is not None:
            pause_s = TURN_PAUSE_S if speaker != self._previous else PAUSE_S
            self._append(np.zeros(round(self.sample_rate * pause_s), np.float32))
        start = self._length
        self._append(samples.astype(np.float32))
        self.timings_ms.append((self._ms(start), self._ms(self._length)))
        self._previous = speaker

    def _append(self, samples: np.ndarray) -> None:
        self._pieces.append(samples)
        self._length += len(samples)

    def _ms(self, samples: int) -> int:
        return round(1000 * samples / self.sample_rate)

    def finish(self) -> Rendered:
        samples = np.concatenate(self._pieces) if self._pieces else np.zeros(0, np.float32)
        return Rendered(samples, self.sample_rate, list(self.timings_ms))


def render(
    speaker: Speaker,
    lines: Sequence[tuple[int, str]],
    on_line: Callable[[int], None] | None = None,
) -> Rendered:
    """The lines, each (speaker, text), spoken in order with pauses between them; `on_line(i)` after
    the i-th (1-based)."""
    recording = Recording(speaker.sample_rate)
    for number, (who, text) in enumerate(lines, start=1):
        recording.add(speaker.speak(text, who), who)
        if on_line is not None:
            on_line(number)
    return recording.finish()
