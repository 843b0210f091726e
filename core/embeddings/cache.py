"""An on-disk cache of passage vectors keyed by model and text hash, wrapped around any embeddings.

Re-running an evaluation over the same corpus, or re-uploading a document, then costs no model
time. sqlite3 (standard library) because the cache is one file, safe across processes, and a
cache miss must never be an error."""

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings


class CachedEmbeddings(Embeddings):
    def __init__(self, inner: Embeddings, path: Path, namespace: str) -> None:
        self.inner = inner
        self.namespace = namespace
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._db.commit()

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.namespace}\x00{text}".encode()).hexdigest()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        keys = [self._key(text) for text in texts]
        found: dict[str, list[float]] = {}
        for start in range(0, len(keys), 500):
            batch = keys[start : start + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", batch)
            found.update({key: np.frombuffer(blob, dtype=np.float32).tolist() for key, blob in rows})
        missing = [i for i, key in enumerate(keys) if key not in found]
        if missing:
            computed = self.inner.embed_documents([texts[i] for i in missing])
            for i, vector in zip(missing, computed, strict=True):
                found[keys[i]] = list(vector)
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                [(keys[i], np.asarray(found[keys[i]], dtype=np.float32).tobytes()) for i in missing],
            )
            self._db.commit()
        return [found[key] for key in keys]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)
