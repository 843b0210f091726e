"""Synthetic corpus for the retrieval scale benchmark: Zipf-sized projects, clustered vectors, Zipf text.

Everything is a pure function of (seed, project index, document index), so the query phase can
rebuild a project's topics from the seed alone, without keeping 1.5 GB of vectors around.

Vectors are not uniform noise, which no index ever sees in practice: each project has a few topics;
a topic is a unit centroid plus a 16-dimensional subspace (a low intrinsic dimension, as text
embeddings have), and a chunk is centroid + a point of that subspace + a little isotropic noise,
normalised. About a third of the topics come from a pool shared by all projects, picked with Zipf
popularity, so that a popular topic's neighbourhood holds chunks of many projects at once.

Text is 20-60 tokens per chunk: a quarter from the topic's own words, the rest from a Zipf
vocabulary whose head is English stop words (about half of all tokens, as in real prose), so that
the 'english' configuration drops them and the lexical side sees realistic document frequencies."""

import hashlib
from dataclasses import dataclass
from functools import cached_property

import numpy as np

DIM = 384
SUBSPACE_RANK = 16
TOPIC_WORDS = 40
DIRECTION_POOL = 8192
TS_CONFIG = "english"

STOPWORDS = (  # noqa: SIM905  # a line of words reads better than 65 quoted literals
    "the of and to in a is that for it as with was on be by this are or from at an which have not"
    " but all they were we can one has their more its been when there also these if than would"
    " into other only some any each between such may two first used so over most about those both"
    " where after then"
).split()

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class CorpusSpec:
    chunks: int
    projects: int
    exponent: float = 1.1  # of the rank-size law: project r has about r**-exponent of the chunks
    min_size: int = 5
    seed: int = 7
    shared_topics: int = 256
    shared_fraction: float = 0.35  # of a project's topics taken from the shared pool
    vocabulary: int = 8000
    words_min: int = 20
    words_max: int = 60


@dataclass(frozen=True)
class ProjectTopics:
    centroids: np.ndarray  # (topics, DIM), unit rows
    bases: np.ndarray  # (topics, SUBSPACE_RANK) indices into the direction pool
    words: np.ndarray  # (topics, TOPIC_WORDS) vocabulary indices
    shared: np.ndarray  # (topics,) shared-pool index, or -1 for a private topic
    weights: np.ndarray  # (topics,) how much of the project each topic covers


@dataclass(frozen=True)
class DocumentPlan:
    project: int  # project index
    document: int  # document index within the project
    size: int  # chunks


@dataclass(frozen=True)
class DocumentData:
    texts: list[str]
    vectors: np.ndarray  # (size, DIM) float32, unit rows
    topics: np.ndarray  # (size,) topic index within the project
    title: str


def project_sizes(spec: CorpusSpec) -> np.ndarray:
    """Rank-size Zipf: sizes sum to exactly spec.chunks, each >= min_size, largest first."""
    if spec.chunks < spec.min_size * spec.projects:
        raise ValueError("too few chunks for that many projects at min_size")
    weights = np.arange(1, spec.projects + 1, dtype=np.float64) ** -spec.exponent
    spare = spec.chunks - spec.min_size * spec.projects
    sizes = spec.min_size + np.floor(spare * weights / weights.sum()).astype(np.int64)
    sizes[: spec.chunks - int(sizes.sum())] += 1  # the rounding remainder, one each to the largest
    return sizes


def plan_documents(spec: CorpusSpec, sizes: np.ndarray) -> list[DocumentPlan]:
    """A few hundred chunks per document (a book chapter or a paper), in a shuffled insertion order:
    documents of all projects arrive interleaved over time, so a project's rows are spread over
    the heap as in a live system rather than stored contiguously."""
    rng = np.random.default_rng([spec.seed, 3])
    plans: list[DocumentPlan] = []
    for project, size in enumerate(sizes.tolist()):
        count = max(1, round(size / 250))
        cuts = np.sort(rng.choice(np.arange(1, size), size=count - 1, replace=False)) if count > 1 else []
        bounds = [0, *np.asarray(cuts).tolist(), size]
        plans.extend(DocumentPlan(project, d, bounds[d + 1] - bounds[d]) for d in range(count))
    return [plans[i] for i in rng.permutation(len(plans))]


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


class Corpus:
    """The shared pieces (vocabulary, direction pool, shared topics) and the per-project generators."""

    def __init__(self, spec: CorpusSpec) -> None:
        self.spec = spec
        rng = np.random.default_rng([spec.seed, 0])
        self.vocab = np.array(STOPWORDS + _pseudo_words(spec.vocabulary - len(STOPWORDS), rng), dtype=object)
        ranks = np.arange(1, len(self.vocab) + 1, dtype=np.float64)
        self._word_cdf = np.cumsum(1 / ranks) / np.sum(1 / ranks)
        self.directions = (rng.standard_normal((DIRECTION_POOL, DIM)) / np.sqrt(DIM)).astype(np.float32)
        self.shared_centroids = _unit(rng.standard_normal((spec.shared_topics, DIM))).astype(np.float32)
        self.shared_bases = rng.integers(0, DIRECTION_POOL, (spec.shared_topics, SUBSPACE_RANK))
        self.shared_words = rng.integers(len(STOPWORDS), len(self.vocab), (spec.shared_topics, TOPIC_WORDS))
        popularity = np.arange(1, spec.shared_topics + 1, dtype=np.float64) ** -1.0
        self._shared_popularity = popularity / popularity.sum()
        self._topics: dict[int, ProjectTopics] = {}

    @cached_property
    def sizes(self) -> np.ndarray:
        return project_sizes(self.spec)

    def topics(self, project: int) -> ProjectTopics:
        if project not in self._topics:
            self._topics[project] = self._make_topics(project, int(self.sizes[project]))
        return self._topics[project]

    def _make_topics(self, project: int, size: int) -> ProjectTopics:
        rng = np.random.default_rng([self.spec.seed, 1, project])
        count = int(np.clip(2 + size // 400, 2, 48))
        shared = np.where(
            rng.random(count) < self.spec.shared_fraction,
            rng.choice(self.spec.shared_topics, size=count, p=self._shared_popularity),
            -1,
        )
        # Private topics lean towards a project theme: a project is about something.
        theme = _unit(rng.standard_normal(DIM))
        private = _unit(theme + 0.8 * _unit(rng.standard_normal((count, DIM))))
        is_shared = shared >= 0
        centroids = np.where(is_shared[:, None], self.shared_centroids[shared], private).astype(np.float32)
        bases = np.where(
            is_shared[:, None],
            self.shared_bases[shared],
            rng.integers(0, DIRECTION_POOL, (count, SUBSPACE_RANK)),
        )
        words = np.where(
            is_shared[:, None],
            self.shared_words[shared],
            rng.integers(len(STOPWORDS), len(self.vocab), (count, TOPIC_WORDS)),
        )
        weights = rng.dirichlet(np.full(count, 0.7))
        return ProjectTopics(centroids, bases, words, shared, weights)

    def document(self, plan: DocumentPlan) -> DocumentData:
        topics = self.topics(plan.project)
        rng = np.random.default_rng([self.spec.seed, 2, plan.project, plan.document])
        # A document dwells on a few of its project's topics.
        mix = rng.dirichlet(topics.weights * len(topics.weights) * 0.3 + 0.01)
        chunk_topics = rng.choice(len(mix), size=plan.size, p=mix)
        vectors = self.topic_points(topics, chunk_topics, rng, spread=1.0)
        texts = self._texts(topics, chunk_topics, rng)
        title = " ".join(self.vocab[topics.words[chunk_topics[0], :3]]).title()
        return DocumentData(texts, vectors, chunk_topics, title)

    def topic_points(
        self, topics: ProjectTopics, which: np.ndarray, rng: np.random.Generator, spread: float
    ) -> np.ndarray:
        """centroid + subspace point (norm ~0.9 x spread) + isotropic noise (norm ~0.3), unit rows."""
        out = np.empty((len(which), DIM), dtype=np.float32)
        for topic in np.unique(which):
            rows = np.flatnonzero(which == topic)
            basis = self.directions[topics.bases[topic]]
            weights = rng.standard_normal((len(rows), SUBSPACE_RANK)).astype(np.float32) * (0.22 * spread)
            noise = rng.standard_normal((len(rows), DIM)).astype(np.float32) * (0.3 / np.sqrt(DIM))
            out[rows] = topics.centroids[topic] + weights @ basis + noise
        return _unit(out).astype(np.float32)

    def _texts(self, topics: ProjectTopics, chunk_topics: np.ndarray, rng: np.random.Generator) -> list[str]:
        lengths = rng.integers(self.spec.words_min, self.spec.words_max + 1, size=len(chunk_topics))
        total = int(lengths.sum())
        token_topic = np.repeat(chunk_topics, lengths)
        words = np.searchsorted(self._word_cdf, rng.random(total))
        from_topic = rng.random(total) < 0.25
        slot = rng.integers(0, TOPIC_WORDS, total)
        words[from_topic] = topics.words[token_topic[from_topic], slot[from_topic]]
        tokens = self.vocab[np.minimum(words, len(self.vocab) - 1)]
        ends = np.cumsum(lengths)
        spans = zip(ends.tolist(), lengths.tolist(), strict=True)
        return [" ".join(tokens[end - n : end]) for end, n in spans]


def _pseudo_words(count: int, rng: np.random.Generator) -> list[str]:
    """Pronounceable made-up words of 2-4 syllables, unique, none of them a stop word."""
    syllables = [c + v for c in _CONSONANTS for v in _VOWELS]
    seen = set(STOPWORDS)
    words: list[str] = []
    while len(words) < count:
        n = int(rng.integers(2, 5))
        word = "".join(syllables[i] for i in rng.integers(0, len(syllables), n))
        if rng.random() < 0.3:
            word += str(rng.choice(list("nrslt")))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
