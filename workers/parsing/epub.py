"""An EPUB e-book into a ParsedDocument: chapters in reading (spine) order, each chapter's headings as its
sections, the section path (chapter title, headings inside). The chapter title comes from the book's
table of contents (EPUB 3 nav document, else the EPUB 2 NCX), else from the chapter's first heading.
No page numbers: an e-book's pages depend on the reader's layout, so chunks cite chapter and section.

Read with zipfile and defusedxml, not EbookLib: checked_archive (workers/parsing/archive.py) already
holds the archive open and vetted (sizes, bombs, encryption flags, entity declarations in every XML part),
and the path to the chapters is short (META-INF/container.xml -> OPF -> manifest and spine -> TOC).
EbookLib would open the bytes a second time and load every item into memory, with its own XML parsing
(recover=True) and its own errors for a missing item; here a missing chapter is a warning. Chapter XHTML
is parsed by lxml as XML with entities, DTDs and the network off, or by the HTML parser when it is not
well-formed XML (an `&nbsp;` without a DTD), and walked by workers/parsing/html_blocks.py."""

import contextlib
import posixpath
import zipfile
from collections.abc import Iterator
from urllib.parse import unquote
from xml.etree.ElementTree import Element

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring as defused_fromstring
from lxml import etree

from workers.parsing.html import decode_html, parse_page
from workers.parsing.html_blocks import blocks_from_tree, element_text, local_name
from workers.parsing.structured import Block, Found, StructuredFormat, parser_for
from workers.parsing.types import ParseError

WHAT = "e-book"
ENCRYPTED = "The e-book is encrypted (DRM-protected): its chapters cannot be read. Upload a DRM-free copy."
NO_TEXT = "The e-book has no text to index."

_OPF_MEDIA_TYPE = "application/oebps-package+xml"
_CHAPTER_MEDIA_TYPES = frozenset({"application/xhtml+xml", "text/html", "application/xml", "text/xml"})
# Font obfuscation (IDPF, Adobe) is listed in encryption.xml too, but only scrambles embedded fonts.
_FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_XML_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
    remove_comments=True, remove_pis=True,
)  # fmt: skip


def _read(_data: bytes, archive: zipfile.ZipFile | None, found: Found) -> Iterator[Block]:
    assert archive is not None  # a zipped format: the driver hands over the vetted archive
    _refuse_drm(archive)
    opf_path = _package_path(archive)
    package = _xml(archive, opf_path)
    found.title = _book_title(package)
    manifest = _manifest(package, posixpath.dirname(opf_path))
    toc_titles, nav_path = _toc_titles(archive, package, manifest)
    has_text = False
    for path, media_type in _spine(package, manifest):
        if path == nav_path or media_type not in _CHAPTER_MEDIA_TYPES:
            continue  # the nav document is the table of contents, not a chapter
        root = _chapter_tree(archive, path)
        if root is None:
            found.warnings.append(f"the chapter {path!r} is missing from the e-book or unreadable")
            continue
        for block in _chapter_blocks(root, toc_titles.get(path)):
            has_text = has_text or bool(block.body.strip())
            yield block
    if not has_text:
        raise ParseError(NO_TEXT)


FORMAT = StructuredFormat(WHAT, _read)
parse_epub = parser_for(FORMAT)


def _refuse_drm(archive: zipfile.ZipFile) -> None:
    if "META-INF/encryption.xml" not in archive.namelist():
        return
    encryption = _xml(archive, "META-INF/encryption.xml")
    for element in encryption.iter():
        if _local(element) == "EncryptionMethod" and element.get("Algorithm") not in _FONT_OBFUSCATION:
            raise ParseError(ENCRYPTED)


def _package_path(archive: zipfile.ZipFile) -> str:
    """The OPF named by META-INF/container.xml; a book without one gets its only .opf file."""
    if "META-INF/container.xml" in archive.namelist():
        for element in _xml(archive, "META-INF/container.xml").iter():
            media_type = element.get("media-type", _OPF_MEDIA_TYPE)
            if _local(element) == "rootfile" and element.get("full-path") and media_type == _OPF_MEDIA_TYPE:
                return str(element.get("full-path"))
    packages = [name for name in archive.namelist() if name.lower().endswith(".opf")]
    if len(packages) != 1:
        raise ParseError(f"The {WHAT} is damaged: it has no package document (META-INF/container.xml).")
    return packages[0]


def _xml(archive: zipfile.ZipFile, path: str) -> Element:
    """A package part parsed by defusedxml (checked_archive refused entities already; this stays safe
    on its own)."""
    try:
        root: Element = defused_fromstring(archive.read(path))
        return root
    except KeyError as error:
        raise ParseError(f"The {WHAT} is damaged: its part {path!r} is missing.") from error
    except DefusedXmlException as error:
        raise ParseError(f"The {WHAT} was refused: {path!r} declares XML entities.") from error
    except MemoryError:
        raise
    except Exception as error:  # expat's ParseError and friends: malformed XML
        raise ParseError(f"The {WHAT} is damaged: {path!r} is not well-formed XML ({error}).") from error


def _local(element: Element) -> str:
    return str(element.tag).rsplit("}", 1)[-1]


def _resolve(base_dir: str, href: str) -> str:
    return posixpath.normpath(posixpath.join(base_dir, unquote(href.split("#", 1)[0])))


def _manifest(package: Element, base_dir: str) -> dict[str, tuple[str, str, str]]:
    """id -> (path in the archive, media type, properties)."""
    items: dict[str, tuple[str, str, str]] = {}
    for element in package.iter():
        if _local(element) == "item" and element.get("id") and element.get("href"):
            path = _resolve(base_dir, str(element.get("href")))
            media_type, properties = element.get("media-type", ""), element.get("properties", "")
            items[str(element.get("id"))] = (path, media_type, properties)
    return items


def _spine(package: Element, manifest: dict[str, tuple[str, str, str]]) -> list[tuple[str, str]]:
    """(path, media type) of each spine item, in reading order, each once."""
    spine: list[tuple[str, str]] = []
    for element in package.iter():
        if _local(element) == "itemref" and element.get("idref") in manifest:
            path, media_type, _ = manifest[str(element.get("idref"))]
            if (path, media_type) not in spine:
                spine.append((path, media_type))
    return spine


def _book_title(package: Element) -> str:
    for element in package.iter():
        if _local(element) == "title" and element.text and element.text.strip():
            return " ".join(element.text.split())
    return ""


def _toc_titles(
    archive: zipfile.ZipFile, package: Element, manifest: dict[str, tuple[str, str, str]]
) -> tuple[dict[str, str], str | None]:
    """Chapter path -> its title in the table of contents (the first entry pointing into it), and the
    path of the EPUB 3 nav document. The TOC is a nicety: a broken one leaves titles to the headings."""
    titles: dict[str, str] = {}
    nav_path = next((path for path, _, props in manifest.values() if "nav" in props.split()), None)
    nav_root = _chapter_tree(archive, nav_path) if nav_path is not None else None
    if nav_path is not None and nav_root is not None:
        _nav_titles(nav_root, posixpath.dirname(nav_path), titles)
    ncx_id = next((e.get("toc") for e in package.iter() if _local(e) == "spine"), None)
    ncx = manifest.get(str(ncx_id)) or next(
        (item for item in manifest.values() if item[1] == "application/x-dtbncx+xml"), None
    )
    if not titles and ncx is not None:
        with contextlib.suppress(ParseError):  # a broken NCX: the headings give the titles
            _ncx_titles(_xml(archive, ncx[0]), posixpath.dirname(ncx[0]), titles)
    return titles, nav_path


def _nav_titles(root: etree._Element, base_dir: str, titles: dict[str, str]) -> None:
    navs = [element for element in root.iter() if local_name(element) == "nav"]
    tocs = [nav for nav in navs if any("toc" in str(v).split() for k, v in nav.attrib.items() if "type" in k)]
    for nav in tocs[:1] or navs[:1]:
        for link in nav.iter():
            if local_name(link) == "a" and link.get("href"):
                label = element_text(link)
                if label:
                    titles.setdefault(_resolve(base_dir, str(link.get("href"))), label)


def _ncx_titles(ncx: Element, base_dir: str, titles: dict[str, str]) -> None:
    for point in ncx.iter():
        if _local(point) != "navPoint":
            continue
        label = next((e.text for e in point.iter() if _local(e) == "text" and e.text), "")
        source = next((e.get("src") for e in point.iter() if _local(e) == "content" and e.get("src")), "")
        if label.strip() and source:
            titles.setdefault(_resolve(base_dir, source), " ".join(label.split()))


def _chapter_tree(archive: zipfile.ZipFile, path: str) -> etree._Element | None:
    """XHTML as XML (entities, DTDs and the network off); markup that is not well-formed XML, as HTML;
    None for a missing or empty part."""
    try:
        data = archive.read(path)
    except KeyError:
        return None
    try:
        return etree.fromstring(data, parser=_XML_PARSER)
    except etree.XMLSyntaxError:
        pass
    try:
        return parse_page(decode_html(data))
    except ParseError:
        return None


def _chapter_blocks(root: etree._Element, toc_title: str | None) -> list[Block]:
    body = next((element for element in root.iter() if local_name(element) == "body"), root)
    headings = (element_text(element) for element in body.iter() if local_name(element) in _HEADINGS)
    chapter_title = toc_title or next((text for text in headings if text), "")
    return blocks_from_tree(body, base_path=(chapter_title,) if chapter_title else ())
