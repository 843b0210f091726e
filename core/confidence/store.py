"""Where a model pair's calibration comes from: a file `studyai calibrate` wrote in the data directory,
then the one fitted here for the embedded defaults (core/confidence/fitted/), else none: every label
"medium" until it is fitted, with a warning at start-up."""

import json
import logging
from pathlib import Path
from urllib.parse import urlsplit

from core.confidence.model import Calibration, uncalibrated
from core.settings import Settings

log = logging.getLogger(__name__)
FITTED = Path(__file__).parent / "fitted"
EMBEDDED_PREFIX = "embedded/"


def chat_model_key(settings: Settings) -> str:
    """The embedded server's weights by name; an external model by its host and name (the same name
    behind another server may be another quantisation, so it is not taken for the embedded one), unless
    LLM_MODEL says it is the embedded weights served by studyAI's own model server elsewhere
    (`python -m core.llm.server`: docker-compose's and Kubernetes' model service): `embedded/NAME`."""
    if settings.llm.base_url is None:
        return f"embedded/{settings.llm.local_model}"
    if settings.llm.model.startswith(EMBEDDED_PREFIX):
        return settings.llm.model
    return f"{urlsplit(settings.llm.base_url).netloc}/{settings.llm.model}"


def _file_name(chat_model: str, embedding_model: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in f"{chat_model}__{embedding_model}")
    return f"confidence-{safe}.json"


def calibration_path(data_dir: Path, chat_model: str, embedding_model: str) -> Path:
    return data_dir / "calibration" / _file_name(chat_model, embedding_model)


def calibration_for(chat_model: str, embedding_model: str, data_dir: Path | None = None) -> Calibration:
    candidates = [FITTED / _file_name(chat_model, embedding_model)]
    if data_dir is not None:
        candidates.insert(0, calibration_path(data_dir, chat_model, embedding_model))
    for path in candidates:
        if path.exists():
            return Calibration.from_dict(json.loads(path.read_text()) | {"source": f"file: {path}"})
    log.warning(
        "no confidence calibration for the chat model %r with the embedding model %r: every answer and"
        " grade is labelled 'medium' until `studyai calibrate --project ID` fits one.",
        chat_model,
        embedding_model,
    )
    return uncalibrated(chat_model, embedding_model)


def save_calibration(directory: Path, calibration: Calibration) -> Path:
    """Writes the calibration under `directory` (a data directory's calibration/ or FITTED's parent)."""
    path = directory / _file_name(calibration.chat_model, calibration.embedding_model)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(calibration.as_dict(), indent=2) + "\n")
    return path
