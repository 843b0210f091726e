"""A real worker indexes with the default engine (e5-onnx-int8): its chunks carry that model's name,
and each stored vector is, bit for bit, what the engine gives the chunk's text in this process."""

import hashlib
import subprocess

import httpx
import numpy as np

from core.embeddings.e5.engine import E5OnnxEmbeddings
from core.settings import Settings
from tests.conftest import Conn, UserFactory, create_project, index_documents

NOTES = """# Recursion

A recursive function calls itself on a smaller input until it reaches a base case.

## Base cases

Without a base case the recursion never ends, and Python stops it with a RecursionError.

## Fotossíntese

As plantas convertem a energia da luz em energia química armazenada na glicose.
"""


async def test_worker_stores_the_engines_vectors(
    client: httpx.AsyncClient,
    worker: subprocess.Popen[bytes],
    make_user: UserFactory,
    db: Conn,
    settings: Settings,
) -> None:
    assert settings.embeddings.model == "e5-small-enpt-onnx-int8"
    owner = await make_user("embedder")
    project_id = await create_project(client, owner)
    document_id = (await index_documents(client, owner, project_id, {"recursion.md": NOTES}))["recursion.md"]

    cur = await db.execute(
        "SELECT context_header, text, content_hash, embedding_model, embedding::text AS embedding"
        " FROM chunks WHERE project_id = %s AND document_id = %s ORDER BY ordinal",
        (project_id, document_id),
    )
    chunks = await cur.fetchall()
    assert chunks and {c["embedding_model"] for c in chunks} == {"e5-small-enpt-onnx-int8"}
    texts = [f"{c['context_header']}\n\n{c['text']}" if c["context_header"] else c["text"] for c in chunks]
    assert [hashlib.sha256(t.encode()).hexdigest() for t in texts] == [c["content_hash"] for c in chunks]

    stored = np.asarray([np.fromstring(c["embedding"].strip("[]"), sep=",") for c in chunks], np.float32)
    mine = np.asarray(E5OnnxEmbeddings(settings.models_dir, threads=1).embed_documents(texts), np.float32)
    assert stored.shape == (len(chunks), 384)
    assert np.array_equal(stored, mine)  # another process, another build of the model, same numbers
