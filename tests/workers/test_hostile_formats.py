"""Every hostile kind of the new formats (issue 29) through the bounded parse child the worker uses: each
ends in a ParseError with its reason under the child's memory cap and time limit, nothing read from
outside the file, and the child's bounds hold (a slow parse is stopped, a bomb stays under the cap)."""

import pytest

from core.settings.parsing import ParseSettings
from tests.workers import web_ebook_inputs as inputs
from tests.workers.test_office_formats import HOSTILE, pptx_bytes
from workers.parsing.bounded import parse_bounded
from workers.parsing.types import ParseError

EPUB_HOSTILE = {
    "epub xxe": (lambda: inputs.build_epub({**inputs.CHAPTERS, "ch2": inputs.XXE_CHAPTER}), "entities"),
    "epub billion laughs": (
        lambda: inputs.build_epub(package=inputs.opf(doctype=inputs.BILLION_LAUGHS, title="&a9;")),
        "entities",
    ),
    "epub truncated": (lambda: inputs.build_epub()[:-200], "damaged"),
    "epub drm": (
        lambda: inputs.build_epub(extra={"META-INF/encryption.xml": inputs.DRM_ENCRYPTION}),
        "encrypted",
    ),
}


def limits(max_memory_mb: int = 512, timeout_s: float = 60) -> ParseSettings:
    # model_copy does not validate: a test may go below the 128 MB an operator can set
    base = ParseSettings(max_pages=100, max_chars=10**6, timeout_s=timeout_s)
    return base.model_copy(update={"max_memory_mb": max_memory_mb})


@pytest.mark.parametrize("kind", sorted(HOSTILE))
async def test_hostile_office_files_fail_with_the_reason_in_the_child(kind: str) -> None:
    source_type, build, reason, max_memory_mb = HOSTILE[kind]
    cap = min(max_memory_mb, 512)  # the bomb's own 256 MB cap, else a child of 512 MB
    with pytest.raises(ParseError, match=reason) as refused:
        await parse_bounded(
            build(), source_type=source_type, filename=f"h.{source_type}", title=None, limits=limits(cap)
        )
    assert "root:" not in str(refused.value) and "lollol" not in str(refused.value)


@pytest.mark.parametrize("kind", sorted(EPUB_HOSTILE))
async def test_hostile_ebooks_fail_with_the_reason_in_the_child(kind: str) -> None:
    build, reason = EPUB_HOSTILE[kind]
    with pytest.raises(ParseError, match=reason) as refused:
        await parse_bounded(build(), source_type="epub", filename="h.epub", title=None, limits=limits())
    assert "root:" not in str(refused.value)


async def test_deep_html_nesting_stays_within_the_childs_bounds() -> None:
    doc = await parse_bounded(
        inputs.deeply_nested_page(), source_type="html", filename="deep.html", title=None, limits=limits()
    )
    assert doc.text.strip()


@pytest.mark.parametrize("source_type", ["pptx", "html"])
async def test_the_time_limit_holds_for_the_new_formats(source_type: str) -> None:
    data = pptx_bytes() if source_type == "pptx" else inputs.DIV_PAGE.encode()
    with pytest.raises(ParseError, match=r"took longer than 0\.05 s and was stopped"):
        await parse_bounded(
            data,
            source_type=source_type,
            filename=f"slow.{source_type}",
            title=None,
            limits=limits(timeout_s=0.05),
        )


async def test_a_memory_cap_below_what_the_parser_needs_fails_with_the_memory_reason() -> None:
    with pytest.raises(ParseError, match="needs more memory than allowed"):
        await parse_bounded(
            pptx_bytes(), source_type="pptx", filename="deck.pptx", title=None, limits=limits(40)
        )
