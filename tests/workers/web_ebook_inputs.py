"""Web pages and EPUB e-books built in the tests (no binaries committed), hostile ones included."""

import io
import zipfile

NAV_TEXT = "All courses catalogue"
COOKIE_TEXT = "We use cookies to improve your experience"
SIDEBAR_TEXT = "Lifetimes explained simply"
FOOTER_TEXT = "All rights reserved"
BOILERPLATE = (
    NAV_TEXT,
    COOKIE_TEXT,
    SIDEBAR_TEXT,
    FOOTER_TEXT,
    "Subscribe to our newsletter",
    "Learn Systems",
)

CODE = """fn main() {
    let s1 = String::from("hello");
    let s2 = s1;
\t// println!("{}", s1); // error: value moved
    println!("{} <world>", s2);
}"""
_CODE_HTML = CODE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _furniture(main: str) -> str:
    """A page as saved from a browser: header and nav menu, cookie banner, sidebar, footer, `main` between."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Ownership in Rust | Learn Systems</title>
<meta property="og:title" content="Ownership in Rust"><style>body {{ font: 12px serif }}</style>
<script>window.analytics = "Learn Systems tracker";</script></head>
<body>
<header class="site-header"><a class="logo" href="/">Learn Systems</a>
<nav id="main-nav"><ul><li><a href="/">Home</a></li><li><a href="/c">{NAV_TEXT}</a></li></ul></nav></header>
<div id="cookie-banner" class="cookie-consent"><p>{COOKIE_TEXT}. Accept all cookies?</p>
<button>Accept</button></div>
<div class="layout">{main}
<div class="col-4 sidebar"><h3>Related articles</h3><ul><li><a href="/x">{SIDEBAR_TEXT}</a></li>
<li><a href="/y">Smart pointers overview</a></li></ul>
<p>Subscribe to our newsletter for weekly tips.</p></div>
</div>
<footer id="site-footer"><p>Copyright 2024 Learn Systems. {FOOTER_TEXT}. Privacy policy.</p></footer>
</body></html>"""


ARTICLE = f"""<h1>Ownership in Rust</h1>
<p>Ownership is the set of rules that governs how a Rust program manages memory. Every value has a
single owner, and the value is dropped when the owner goes out of scope.</p>
<h2>Moves</h2>
<p>Assigning a heap value to another variable <em>moves</em> it: the first variable can no longer be used.</p>
<pre><code class="language-rust">{_CODE_HTML}
</code></pre>
<h3>Copy types</h3>
<p>Integers and other scalar types implement <code>Copy</code>, so assigning them copies the value.</p>
<ul><li>All integer types, such as u32</li><li>The Boolean type, bool</li><li>Tuples of Copy types</li></ul>
<h2>Borrowing rules</h2>
<p>References let you use a value without taking ownership. The table summarises the rules.</p>
<table><thead><tr><th>Reference</th><th>How many at once</th></tr></thead>
<tbody><tr><td>&amp;T shared</td><td>any number</td></tr>
<tr><td>&amp;mut T exclusive</td><td>exactly one</td></tr>
</tbody></table>
<p>These rules are checked at compile time by the borrow checker, which prevents data races.</p>"""

# Semantic HTML5: the content in <main><article>.
SEMANTIC_PAGE = _furniture(f"<main><article>{ARTICLE}</article></main>")
# A page of divs only (no <main>, <article> or <aside>): trafilatura has to find the content.
DIV_PAGE = _furniture(f'<div class="col-8 post">{ARTICLE}</div>').replace("sidebar", "widgets")

PORTUGUESE_PAGE = """<!DOCTYPE html><html lang="pt-BR"><head><meta charset="{charset}">
<title>Programação em Python</title></head>
<body><nav><a href="/">Início</a> <a href="/cursos">Cursos</a></nav>
<main><h1>Introdução à programação</h1>
<p>A programação é a arte de dar instruções ao computador. Você aprenderá funções, laços e coleções.</p>
<h2>Funções e ações</h2>
<p>Uma função agrupa ações: é o coração de qualquer programa, não só em São Paulo.</p>
</main><footer>Política de privacidade - Todos os direitos reservados</footer></body></html>"""
PORTUGUESE_WORDS = (
    "Introdução à programação",
    "Você aprenderá funções, laços e coleções",
    "coração",
    "São Paulo",
)

BOILERPLATE_ONLY_PAGE = f"""<html><head><title>Home</title></head><body>
<nav><ul><li><a href="/">Home</a></li><li><a href="/c">{NAV_TEXT}</a></li></ul></nav>
<div id="cookie-banner">{COOKIE_TEXT}.</div><footer>{FOOTER_TEXT}.</footer></body></html>"""


def deeply_nested_page(depth: int = 100_000) -> bytes:
    return (
        "<html><body><p>A paragraph before the nesting, long enough to count as the page's text.</p>"
        + "<div>" * depth + "<p>deep inside</p>" + "</div>" * depth + "</body></html>"
    ).encode()  # fmt: skip


# EPUB --------------------------------------------------------------------------------------------------

CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>"""


def chapter(body: str, title: str = "Chapter", head: str = "") -> str:
    return f"""<?xml version="1.0" encoding="utf-8"?>{head}
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops">
<head><title>{title}</title></head><body>{body}</body></html>"""


CHAPTERS = {
    # In the TOC as "1. Ownership": the h1 repeats it, so it is not a section under itself.
    "ch1": chapter(
        "<h1>Ownership</h1><p>Every value has one owner.</p><h2>Moves</h2><p>A move transfers ownership.</p>"
        "<h3>Copy types</h3><p>Scalars are copied, not moved.</p><pre>let x = 5;\nlet y = x;</pre>"
    ),
    # Not in the TOC: its first heading is its title. `&nbsp;` without a DTD: not XML, read as HTML.
    "ch2": chapter(
        "<h1>Borrowing</h1><p>References&nbsp;borrow a value.</p>"
        "<h2>Rules</h2><p>One mutable or many shared.</p>"
    ),
    "ch3": chapter("<h1>Lifetimes</h1><p>Lifetimes name scopes.</p><h2>Elision</h2><p>Often implied.</p>"),
}
NAV = """<?xml version="1.0" encoding="utf-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><head><title>Contents</title>
</head><body><nav epub:type="toc"><h1>Contents</h1><ol><li><a href="text/ch1.xhtml">1. Ownership</a></li>
<li><a href="text/ch3.xhtml#start">Chapter 3: Lifetimes</a></li></ol></nav></body></html>"""


def opf(
    spine: tuple[str, ...] = ("ch1", "ch2", "ch3"), doctype: str = "", title: str = "The Rust Book"
) -> str:
    # Manifest order ch3, ch1, ch2: reading order is the spine's.
    items = "".join(
        f'<item id="{name}" href="text/{name}.xhtml" media-type="application/xhtml+xml"/>'
        for name in ("ch3", "ch1", "ch2")
    )
    itemrefs = "".join(f'<itemref idref="{name}"/>' for name in ("nav", *spine))
    return f"""<?xml version="1.0" encoding="utf-8"?>{doctype}
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">urn:x</dc:identifier>
<dc:title>{title}</dc:title><dc:language>en</dc:language></metadata>
<manifest>{items}
<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/></manifest>
<spine>{itemrefs}</spine></package>"""


def build_epub(
    chapters: dict[str, str] = CHAPTERS, *, package: str | None = None, extra: dict[str, str] | None = None
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr("META-INF/container.xml", CONTAINER)
        archive.writestr("OEBPS/content.opf", package or opf())
        archive.writestr("OEBPS/nav.xhtml", NAV)
        for name, xhtml in chapters.items():
            archive.writestr(f"OEBPS/text/{name}.xhtml", xhtml)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return buffer.getvalue()


XXE_CHAPTER = chapter(
    "<h1>Leak</h1><p>&x;</p>", head='<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
)
BILLION_LAUGHS = "<!DOCTYPE package [" + '<!ENTITY a0 "lol">' + "".join(
    f'<!ENTITY a{i} "{f"&a{i - 1};" * 10}">' for i in range(1, 10)
) + "]>"  # fmt: skip
DRM_ENCRYPTION = """<?xml version="1.0"?>
<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
 xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
<enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
<enc:CipherData><enc:CipherReference URI="OEBPS/text/ch1.xhtml"/></enc:CipherData></enc:EncryptedData>
</encryption>"""
FONT_OBFUSCATION = DRM_ENCRYPTION.replace(
    "http://www.w3.org/2001/04/xmlenc#aes128-cbc", "http://www.idpf.org/2008/embedding"
).replace("OEBPS/text/ch1.xhtml", "OEBPS/fonts/serif.otf")
