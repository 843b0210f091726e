"""An on-disk cache of passage vectors keyed by model and text hash, wrapped around any embeddings.

Re-running an evaluation over the same corpus, or re-uploading a document, then costs no model
time. sqlite3 (standard library) because the cache is one file, safe across processes, and a
cache miss must never be an error. One connection serves every thread of the process (the worker
embeds two jobs at once) under a lock: sqlite's connection holds one transaction at a time."""

import hashlib
import logging
import sqlite3
import threading
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

log = logging.getLogger(__name__)


class CachedEmbeddings(Embeddings):
    def __init__(self, inner: Embeddings, path: Path, namespace: str) -> None:
        self.inner = inner
        self.namespace = namespace
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._db.commit()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.namespace}\x00{text}".encode()).hexdigest()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        keys = [self._key(text) for text in texts]
        found = self._read(keys)
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            computed = self.inner.embed_documents([texts[i] for i in missing])  # outside the lock
            for i, vector in zip(missing, computed, strict=True):
                found[keys[i]] = list(vector)
            self._write([(keys[i], np.asarray(found[keys[i]], dtype=np.float32).tobytes()) for i in missing])
        return [found[key] for key in keys]

    def _read(self, keys: list[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        with self._lock:
            for start in range(0, len(keys), 500):
                batch = keys[start : start + 500]
                marks = ",".join("?" * len(batch))
                rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch)
                found.update({key: np.frombuffer(blob, dtype=np.float32).tolist() for key, blob in rows})
        return found

    def _write(self, rows: list[tuple[str, bytes]]) -> None:
        """Keeps the new vectors; one that cannot be kept (a locked or full disk) is only not cached."""
        with self._lock:
            try:
                with self._db:  # one transaction: committed, or rolled back on an error
                    self._db.executemany("INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)", rows)
            except sqlite3.Error as error:
                log.warning("the embedding cache could not keep %d vectors: %s", len(rows), error)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)
