"""Course text made short enough for a small model's prompt: markup that tells the model nothing
removed, then cut after a whole sentence or word."""

import re

from core.text.words import sentence_ends

_HEADING_LINE = re.compile(r"^\s*#{1,6}\s.*$", re.MULTILINE)
# HTML comments, common HTML tags (named, so Rust's `Vec<T>` survives) and mdBook directives.
_MARKUP = re.compile(
    r"<!--.*?-->|\{\{#[^}]*\}\}|</?(?:a|b|br|code|details|div|em|figcaption|figure|hr|i|img|kbd|li|Listing|ol"
    r"|p|pre|section|span|strong|sub|summary|sup|table|tbody|td|th|thead|tr|ul)\b[^>\n]*>",
    re.DOTALL | re.IGNORECASE,
)
_LINK = re.compile(r"\[([^\]\n]+)\](?:\[[^\]\n]*\]|\([^)\n]*\))")  # [text][ref] or [text](url) -> text


def plain(text: str) -> str:
    """One line of prose without the markup that costs prompt tokens and tells the model nothing."""
    return " ".join(_LINK.sub(r"\1", _MARKUP.sub(" ", " ".join(text.split()))).split())


def excerpt(text: str, limit: int) -> str:
    """The start of a chunk's prose: its heading lines are already in the header."""
    return shorten(plain(_HEADING_LINE.sub(" ", text)), limit)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, cut after the last whole sentence when that keeps at least half,
    else after the last whole word with an ellipsis: a model is never shown half a word to copy."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = sentence_ends(head)
    if ends and ends[-1] >= limit / 2:
        return head[: ends[-1]].strip()
    words = head[: limit - 1].rsplit(" ", 1)[0] if " " in head else head[: limit - 1]
    return words.rstrip(" ,;:") + "…"
