"""Where a process gets the confidence calibration for its chat and embedding models, now: the one
stored in Postgres (`studyai calibrate` on any machine writes it there), else a file in this machine's
data folder (what older versions wrote), else the one shipped for the embedded defaults. Every API and
worker process re-reads it at most every CALIBRATION_REFRESH_S, so a refit reaches all of them without a
restart."""

import logging
import time
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from psycopg import Error as DatabaseError
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from core.confidence.model import Calibration
from core.confidence.store import calibration_for
from core.store.runs.calibrations import stored_calibration

log = logging.getLogger(__name__)


class Calibrations(Protocol):
    async def current(self) -> Calibration: ...


class PinnedCalibration:
    """One calibration, never re-read (a test's, or a one-shot command's)."""

    def __init__(self, calibration: Calibration) -> None:
        self.calibration = calibration

    async def current(self) -> Calibration:
        return self.calibration


class CalibrationSource:
    def __init__(
        self,
        pool: AsyncConnectionPool,
        chat_model: str,
        embedding_model: str,
        *,
        data_dir: Path | None,
        all_signals: bool,
        refresh_s: float,
    ) -> None:
        self._pool, self._data_dir = pool, data_dir
        self.chat_model, self.embedding_model = chat_model, embedding_model
        self._all_signals, self._refresh_s = all_signals, refresh_s
        self._current: Calibration | None = None
        self._read_at = -float("inf")

    async def current(self) -> Calibration:
        if self._current is None or time.monotonic() - self._read_at >= self._refresh_s:
            self._current = replace(await self._read(), all_signals=self._all_signals)
            self._read_at = time.monotonic()
        return self._current

    async def _read(self) -> Calibration:
        try:
            async with self._pool.connection() as conn:
                stored = await stored_calibration(conn, self.chat_model, self.embedding_model)
        except (DatabaseError, PoolTimeout) as error:  # keep what was read before; try again next time
            log.warning("could not read the confidence calibration: %s", type(error).__name__)
            if self._current is not None:
                return self._current
            stored = None
        if stored is not None:
            return Calibration.from_dict(stored | {"source": "database"})
        if self._current is not None and self._current.source != "database":
            return self._current  # the files do not change under a running process
        return calibration_for(self.chat_model, self.embedding_model, self._data_dir)
