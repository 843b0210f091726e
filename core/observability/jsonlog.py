"""The request log's JSON lines (logger `studyai.requests`): written by the API and by the agent-run
service below it, so the API's access lines and an agent's outcome lines land in one stream."""

import json
import logging
import traceback
from typing import Any

log = logging.getLogger("studyai.requests")


def log_json(level: int, event: str, **fields: Any) -> None:
    """One JSON line. Callers pass ids, outcomes, timings and counts, never prompts or document text."""
    log.log(level, json.dumps({"event": event, **fields}, default=str, ensure_ascii=False))


def _frames(error: BaseException) -> list[str]:
    """Where it failed, without the message: an exception's text can quote a prompt or a document."""
    return [f"{f.filename}:{f.lineno}:{f.name}" for f in traceback.extract_tb(error.__traceback__)][-8:]


def log_failure(rid: str, error: BaseException, **fields: Any) -> None:
    """An error's type and frames, with the request id; never its message (see _frames)."""
    log_json(logging.ERROR, "unhandled_error", request_id=rid, error_type=type(error).__name__,
             frames=_frames(error), **fields)  # fmt: skip
