"""A saved web page into a ParsedDocument: its main content only, as heading-delimited sections.

Why not trafilatura's output alone: tried on realistic pages (tests/workers/test_web_and_ebook_formats.py
builds them), trafilatura 2.3 drops an `<article><header><h1>` title, and on a page without
<main>/<article> it falls back to a flat extraction that turns `<pre>` into `<blockquote>` and leaves
tables out; on a page of only a menu and a cookie banner it returns that text as content. So:

1. lxml.html parses the page (the HTML parser resolves no entities and loads no DTD or URL), and the
   boilerplate is removed by rule: nav, header (outside an article), footer, aside, forms, hidden
   elements, and elements whose id, class or ARIA role names a menu, cookie banner, sidebar, footer,
   breadcrumb, share bar or advert.
2. The content is the page's one <main> (or role="main"), else its one <article>; else trafilatura finds
   the main text in the cleaned page, and the content is the smallest element that holds 90% of the words
   trafilatura kept: an unlabelled sidebar ("col-4") stays out, and the element is walked whole, so its
   headings, code and tables survive.
3. workers/parsing/html_blocks.py walks that element into Blocks (h1-h6 as the section path).

Bytes are decoded by the BOM, else the page's declared charset (ISO-8859-1 read as windows-1252, as
browsers do), else UTF-8, else windows-1252: a saved page need not be UTF-8."""

import codecs
import re
import zipfile
from collections import Counter
from collections.abc import Iterator

import lxml.html
from lxml import etree

from workers.parsing.html_blocks import blocks_from_tree, element_text, local_name, normalized
from workers.parsing.structured import Block, Found, StructuredFormat, parser_for
from workers.parsing.types import ParseError

NO_CONTENT = "The web page has no main text to index (only menus, banners or other page furniture)."

_CHARSET = re.compile(rb"""<meta[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_CHARSET_PROBE = 4096
# The WHATWG encoding standard reads these labels as windows-1252, which defines 0x80-0x9F (curly quotes).
_AS_WINDOWS_1252 = {"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "cp819"}
_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*>")

_BOILERPLATE_TAGS = frozenset({"nav", "footer", "aside", "form", "dialog", "menu"})
_BOILERPLATE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog"})
# Compared with the start of each id/class token ("site-navbar" -> "site", "navbar"): "nav" finds
# "navbar" and "navigation" but a class like "canvas" or "unavailable" is no token starting with it.
_BOILERPLATE_STEMS = (
    "nav", "menu", "cookie", "consent", "gdpr", "banner", "sidebar", "footer", "breadcrumb", "share",
    "sharing", "social", "advert", "ads", "popup", "newsletter", "lineno", "skip-link",
)  # fmt: skip
_TOKEN = re.compile(r"[a-z0-9]+(?:-link)?")
_WORD = re.compile(r"\w+")
_COVERAGE = 0.9
# A named element holding most of the page's text is a layout wrapper only if that text is more than a
# banner's: on a page of only a menu and a cookie notice, the notice is most of the text.
_CONTENT_MIN_CHARS = 1000


def _read(data: bytes, _archive: zipfile.ZipFile | None, found: Found) -> Iterator[Block]:
    root = parse_page(decode_html(data))
    found.title = _page_title(root)
    remove_boilerplate(root)
    blocks = blocks_from_tree(main_content(root))
    if not any(block.body.strip() for block in blocks):
        raise ParseError(NO_CONTENT)
    yield from blocks


# Not zipped: the tree is bounded by the upload's size.
FORMAT = StructuredFormat("web page", _read, zipped=False)
parse_html = parser_for(FORMAT)


def decode_html(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8) :].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    declared = _declared_charset(data[:_CHARSET_PROBE])
    if declared:
        try:
            return data.decode(declared)
        except UnicodeDecodeError:
            pass  # a wrong declaration: try what the bytes look like
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode(declared or "cp1252", errors="replace")


def _declared_charset(head: bytes) -> str | None:
    match = _CHARSET.search(head)
    if not match:
        return None
    label = match.group(1).decode("ascii").lower()
    if label in _AS_WINDOWS_1252:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def parse_page(text: str) -> etree._Element:
    """The page's tree; a page that is no HTML at all is a ParseError."""
    # lxml refuses a str that declares its own encoding; the bytes are already decoded.
    text = _XML_DECLARATION.sub("", text, count=1)
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
    try:
        return lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError) as error:
        raise ParseError(f"The web page cannot be read as HTML ({error}).") from error


def _page_title(root: etree._Element) -> str:
    for meta in root.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").lower() == "og:title":
            content = normalized(meta.get("content") or "")
            if content:
                return content
    for element in root.iter("title"):
        return element_text(element)
    return ""


def remove_boilerplate(root: etree._Element) -> None:
    """Drops page furniture in place. An element matched only by its id or class is kept when it holds
    the page's <main>, <article> or <h1>, or most of its (long enough) text: a wrapper like
    <div class="with-sidebar"> holds the content too."""
    page_chars = max(len(element_text(root)), 1)
    doomed: list[etree._Element] = []
    for element in root.iter():
        tag = local_name(element)
        if tag in ("html", "body", "main", "article"):
            continue
        furniture = tag in _BOILERPLATE_TAGS or (tag == "header" and not _in_content(element))
        named = not furniture and _named_boilerplate(element) and not _holds_content(element, page_chars)
        if furniture or named or _is_hidden(element):
            doomed.append(element)
    for element in doomed:
        element.drop_tree()  # keeps the tail, text that follows the element in its parent


def _is_hidden(element: etree._Element) -> bool:
    style = (element.get("style") or "").replace(" ", "").lower()
    return (
        element.get("hidden") is not None
        or (element.get("aria-hidden") or "").lower() == "true"
        or "display:none" in style
    )


def _in_content(element: etree._Element) -> bool:
    return any(local_name(parent) in ("article", "main", "section") for parent in element.iterancestors())


def _named_boilerplate(element: etree._Element) -> bool:
    if (element.get("role") or "").lower() in _BOILERPLATE_ROLES:
        return True
    names = f"{element.get('id') or ''} {element.get('class') or ''}".lower()
    return any(token.startswith(_BOILERPLATE_STEMS) for token in _TOKEN.findall(names))


def _holds_content(element: etree._Element, page_chars: int) -> bool:
    if any(local_name(inner) in ("main", "article", "h1") for inner in element.iterdescendants()):
        return True
    chars = len(element_text(element))
    return chars > page_chars / 2 and chars >= _CONTENT_MIN_CHARS


def main_content(root: etree._Element) -> etree._Element:
    body = root.find("body")
    body = root if body is None else body
    mains = [
        element for element in root.iter() if local_name(element) == "main" or element.get("role") == "main"
    ]
    articles = [element for element in root.iter() if local_name(element) == "article"]
    for candidates in (mains, articles):
        if len(candidates) == 1 and element_text(candidates[0]):
            return candidates[0]
    return _located_by_trafilatura(body)


def _located_by_trafilatura(body: etree._Element) -> etree._Element:
    """The smallest element holding _COVERAGE of the words trafilatura keeps as the main text; the whole
    (cleaned) body when trafilatura finds none."""
    import trafilatura  # here: pages with <main> or <article>, and e-books, never load it

    try:
        extracted = trafilatura.extract(
            lxml.html.tostring(body, encoding="unicode"), output_format="txt", include_tables=True,
            include_comments=False, include_links=False, favor_recall=True,
        )  # fmt: skip
    except MemoryError:
        raise
    except Exception:  # trafilatura only narrows the content down; without it the body is the content
        return body
    kept = set(_WORD.findall((extracted or "").lower()))
    if not kept:
        return body
    hits: Counter[etree._Element] = Counter()
    words: Counter[etree._Element] = Counter()
    for _event, element in etree.iterwalk(body, events=("end",)):
        own = _WORD.findall(f"{element.text or ''}".lower())
        for child in element:
            own.extend(_WORD.findall((child.tail or "").lower()))
        hits[element] += sum(word in kept for word in own)
        words[element] += len(own)
        parent = element.getparent()
        if parent is not None and element is not body:
            hits[parent] += hits[element]
            words[parent] += words[element]
    needed = _COVERAGE * hits[body]
    covering = [element for element in hits if hits[element] >= needed]
    return min(covering, key=lambda element: words[element], default=body)
