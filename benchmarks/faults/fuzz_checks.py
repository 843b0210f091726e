"""What the fuzz run (benchmarks/faults/fuzz.py) checks in each answer, and the hostile variants of the
generated requests it sends besides."""

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schemathesis.core import NotSet

from benchmarks.faults.fuzz_parties import Party

# --- checks --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failure:
    check: str  # "server error", "exception", "leak", "4xx without detail", "rows deleted"
    route: str
    status: int | None
    request: str
    detail: str


@dataclass
class RouteStats:
    route: str
    cases: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    failures: list[Failure] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # the generator could not make cases


def _body(case: Any) -> Any:
    return None if isinstance(case.body, NotSet) else case.body


def _request_text(case: Any) -> str:
    return json.dumps(
        [case.path_parameters, case.query, _body(case)], default=str, ensure_ascii=False
    ).lower()


def describe_case(case: Any) -> str:
    body = json.dumps(_body(case), default=str)[:160] if _body(case) is not None else ""
    query = f"?{json.dumps(case.query, default=str)[:120]}" if case.query else ""
    return f"{case.method} {case.formatted_path}{query} {body}".strip()


def _chunk_ints(value: Any, under_chunk: bool = False) -> Iterable[int]:
    """Ints stored under a key that names chunks, and the `id` of chunk-shaped objects."""
    if isinstance(value, dict):
        chunkish = "ordinal" in value and "document_id" in value
        for key, item in value.items():
            named = "chunk" in key.lower() or (chunkish and key == "id")
            yield from _chunk_ints(item, named)
    elif isinstance(value, list):
        for item in value:
            yield from _chunk_ints(item, under_chunk)
    elif under_chunk and isinstance(value, int) and not isinstance(value, bool):
        yield value


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None


# Pages a browser lands on from an LMS (LTI 1.3): a refusal there is an HTML page stating the reason,
# since the person sees it in the LMS's frame or a new window, not a JSON client.
BROWSER_PAGES = frozenset({"/lti/launch", "/auth/ticket/{ticket}", "/auth/ticket"})


def _explained(case: Any, text: str, body: Any) -> bool:
    """A 4xx says why: a JSON object with `detail`, or on a browser page an HTML page with a heading."""
    if isinstance(body, dict) and "detail" in body:
        return True
    page = text.lstrip().lower()
    return case.path in BROWSER_PAGES and page.startswith("<!doctype html") and "<h1>" in page


def check(case: Any, status: int, content: bytes, victim: Party) -> list[tuple[str, str]]:
    """(check, detail) for each rule the answer breaks."""
    problems: list[tuple[str, str]] = []
    text = content.decode("utf-8", "replace")
    body = _json_or_none(text) if text else None
    if status >= 500:
        problems.append(("server error", text[:300]))
    if 400 <= status < 500 and not _explained(case, text, body):
        problems.append(("4xx without detail", text[:300]))
    sent, lowered = _request_text(case), text.lower()
    leaked = sorted(s for s in victim.secrets() if s in lowered and s not in sent)
    if body is None and text.startswith(("event:", "data:", ":")):  # a stream: its events' data
        body = [_json_or_none(line[5:]) for line in text.splitlines() if line.startswith("data:")]
    chunk_leaks = sorted({i for i in _chunk_ints(body) if i in victim.chunk_ids and str(i) not in sent})
    if leaked or chunk_leaks:
        what = leaked + [f"chunk {i}" for i in chunk_leaks]
        problems.append(("leak", f"{victim.name}'s {what} in {text[:200]}"))
    return problems


# Values the generator does not make (it writes valid UTF-8 and modest numbers) that reach Postgres
# and the models: a NUL character, a lone surrogate (JSON allows the escape), bidi control characters,
# integers past bigint. Surrogates only in JSON bodies: a query string or a form cannot carry them.
HOSTILE_TEXT = ("nul \x00 byte", "\u202e\u2066 bidi", "lone \ud800 surrogate")
HOSTILE_INT = (2**63, -(2**63) - 1, 10**30)


def _hostile(value: Any, index: int, surrogates: bool) -> Any:
    if isinstance(value, dict):
        return {k: _hostile(v, index, surrogates) for k, v in value.items()}
    if isinstance(value, list):
        return [_hostile(v, index, surrogates) for v in value]
    if isinstance(value, str):
        texts = HOSTILE_TEXT if surrogates else HOSTILE_TEXT[:-1]
        return texts[index % len(texts)]
    if isinstance(value, int) and not isinstance(value, bool):
        return HOSTILE_INT[index % len(HOSTILE_INT)]
    return value


def hostile_variant(case: Any, index: int) -> Any | None:
    """The case with every string and integer of its query and body replaced by a hostile value (the
    index picks which), or None when it has neither."""
    body = _body(case)
    json_body = case.media_type is not None and case.media_type.endswith("json")
    new_query = _hostile(case.query, index, surrogates=False) if case.query else case.query
    new_body = _hostile(body, index, surrogates=json_body) if isinstance(body, dict | list) else body
    if new_query == case.query and new_body == body:
        return None
    variant = case.derive(query=new_query)
    # Without generation metadata: schemathesis would revalidate the edited body against the schema,
    # which a lone surrogate cannot cross into its Rust validator; the variant is ours, not a generated case.
    object.__setattr__(variant, "_meta", None)
    if body is not None:
        variant.body = new_body
    return variant
