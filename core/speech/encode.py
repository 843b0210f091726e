"""A recording as a file to play or download: OGG (Vorbis) and MP3, both written by libsndfile, which
the `soundfile` wheel bundles (no ffmpeg, no system library)."""

import io
from typing import Literal

import numpy as np
import soundfile

AudioFormat = Literal["ogg", "mp3"]
FORMATS: dict[AudioFormat, tuple[str, str]] = {"ogg": ("OGG", "VORBIS"), "mp3": ("MP3", "MPEG_LAYER_III")}
MEDIA_TYPES: dict[AudioFormat, str] = {"ogg": "audio/ogg", "mp3": "audio/mpeg"}


def encode(samples: np.ndarray, sample_rate: int, fmt: AudioFormat) -> bytes:
    container, subtype = FORMATS[fmt]
    out = io.BytesIO()
    soundfile.write(out, samples, sample_rate, format=container, subtype=subtype)
    return out.getvalue()


def duration_s(data: bytes) -> float:
    """A file's length, read back from its own headers (what the tests check the encoders by)."""
    info = soundfile.info(io.BytesIO(data))
    return float(info.frames / info.samplerate)
