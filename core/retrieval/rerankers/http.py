"""A remote reranker behind a text-embeddings-inference style API: POST {base_url}/rerank.

The service answers one {"index", "score"} per text, sorted by score rather than by input, so the
answer is mapped back by index and checked to cover every candidate exactly once."""

import math
from typing import Any

import httpx

from core.retrieval.rerankers.base import passage_text
from core.retrieval.types import Candidate

_BODY_EXCERPT = 200  # characters of an error body worth repeating in a message


class RerankerError(RuntimeError):
    """The rerank service failed or answered something that cannot be trusted."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class HttpReranker:
    name = "http"

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = 30.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.url = f"{base_url.rstrip('/')}/rerank"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        # A client handed in belongs to the caller, who closes it; only our own is closed by aclose().
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def score(self, query: str, candidates: list[Candidate]) -> list[float]:
        if not candidates:
            return []
        body = {
            "query": query,
            "texts": [passage_text(candidate) for candidate in candidates],
            "raw_scores": False,
            "truncate": True,  # let the service cut long passages instead of refusing them
        }
        try:
            response = await self._client.post(self.url, json=body, headers=self._headers)
        except httpx.HTTPError as exc:
            raise RerankerError(f"rerank request to {self.url} failed: {exc!r}") from exc
        if not response.is_success:
            excerpt = response.text[:_BODY_EXCERPT]
            raise RerankerError(
                f"rerank service answered HTTP {response.status_code}: {excerpt}", status=response.status_code
            )
        try:
            answer = response.json()
        except ValueError as exc:
            raise RerankerError(
                f"rerank service answered HTTP {response.status_code} with malformed JSON",
                status=response.status_code,
            ) from exc
        return _scores_in_order(answer, len(candidates), response.status_code)


def _scores_in_order(answer: Any, count: int, status: int) -> list[float]:
    def fail(reason: str) -> RerankerError:
        return RerankerError(f"rerank service answered HTTP {status} but {reason}", status=status)

    if not isinstance(answer, list):
        raise fail(f"not a list ({type(answer).__name__})")
    if len(answer) != count:
        raise fail(f"{len(answer)} scores for {count} texts")
    scores: list[float | None] = [None] * count
    for item in answer:
        index = item.get("index") if isinstance(item, dict) else None
        value = item.get("score") if isinstance(item, dict) else None
        # bool is an int subclass in Python, and True must not pass for index 1
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
            raise fail(f"an item has no valid index: {item!r:.80}")
        if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
            raise fail(f"an item has no valid score: {item!r:.80}")
        if scores[index] is not None:
            raise fail(f"index {index} appears twice")
        scores[index] = float(value)
    # count items, all indices distinct and in range: every slot is filled
    return [score for score in scores if score is not None]
