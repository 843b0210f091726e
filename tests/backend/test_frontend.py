"""The web app (frontend/) against the API it uses: every route its one API client (frontend/src/api.js)
names exists in the app's OpenAPI spec with that method, those path parameters and query parameters, and
no other module talks to the network; both languages have every UI string the screens use; and /app is
served with its security headers, gzipped, outside the OpenAPI schema. No database is needed: the spec
and the static files need no lifespan."""

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from backend.frontend import CONTENT_SECURITY_POLICY, FRONTEND_DIR
from backend.main import create_app
from core.runtime.services import ServiceUrls
from core.settings import Settings

SRC = FRONTEND_DIR / "src"
# name: ['METHOD', `template`, { query: [...], optional: true, needs: 'param' }]
ROUTE = re.compile(
    r"^\s+(\w+): \['(GET|POST|PUT|PATCH|DELETE)', `?'?([^`',]+)`?'?(?:, \{([^}]*)\})?\],", re.M
)
# Routes of the study loop (issue 12) the app shows only where the server documents them.
STUDY_LOOP = {"noteMarkdown", "reviewQuestion", "studyQueue", "review", "studySettings", "putStudySettings",
              "mastery", "classMastery"}  # fmt: skip


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    settings = Settings(_env_file=None, STUDYAI_DATA_DIR=tmp_path_factory.mktemp("web"))  # type: ignore[call-arg]
    return create_app(settings, ServiceUrls(database_url="postgresql://unused", redis_url="redis://unused"))


def client_routes() -> dict[str, dict[str, Any]]:
    source = (SRC / "api.js").read_text()
    routes = {}
    for name, method, template, options in ROUTE.findall(source):
        path = template.replace("${P}", "/projects/{project_id}")
        query = re.search(r"query: \[([^\]]*)\]", options or "")
        routes[name] = {
            "method": method.lower(),
            "path": path,
            "query": re.findall(r"'(\w+)'", query.group(1)) if query else [],
            "optional": "optional: true" in (options or ""),
            "needs": (re.search(r"needs: '(\w+)'", options or "") or [None, None])[1],
        }
    return routes


def test_the_client_reads_every_route_of_its_table() -> None:
    routes = client_routes()
    table = (SRC / "api.js").read_text().split("export const ROUTES = {")[1].split("\n};")[0]
    entries = [line for line in table.splitlines() if re.match(r"^\s+\w+: \[", line)]
    assert len(routes) == len(entries) > 30


def test_every_route_the_client_calls_is_in_the_openapi_spec(app: FastAPI) -> None:
    spec = app.openapi()
    missing = []
    for name, route in client_routes().items():
        operation = spec["paths"].get(route["path"], {}).get(route["method"])
        waiting = route["optional"] or route["needs"]
        if operation is None:
            if not waiting:
                missing.append(f"{name}: {route['method'].upper()} {route['path']}")
            continue
        parameters = {p["name"]: p["in"] for p in operation.get("parameters", [])}
        for placeholder in re.findall(r"\{(\w+)\}", route["path"]):
            assert parameters.get(placeholder) == "path", (name, placeholder)
        offered = {p for p, where in parameters.items() if where == "query"}
        if route["needs"] and route["needs"] not in offered:
            continue  # the study loop's filters are not on this server yet: the app hides that view
        assert set(route["query"]) <= offered, (name, set(route["query"]) - offered)
    assert missing == []
    # Only the study loop's routes may be absent (the app hides their screens where they are).
    absent = {n for n, r in client_routes().items() if r["method"] not in spec["paths"].get(r["path"], {})}
    assert absent <= STUDY_LOOP


def test_only_the_api_client_talks_to_the_network() -> None:
    for path in SRC.rglob("*.js"):
        text = path.read_text()
        if path.name == "api.js":
            continue
        for needle in ("fetch(", "new XMLHttpRequest", "new WebSocket", "new EventSource", "sendBeacon("):
            assert needle not in text, f"{path.name} uses {needle}: requests go through api.js"


def test_api_html_only_through_the_sanitizer() -> None:
    """API text is rendered as text; the one place HTML is set is the Markdown component, after DOMPurify.
    (KaTeX builds its formulas as DOM nodes, which typeset.js passes through a DOMPurify of their own.)"""
    for path in SRC.rglob("*.js"):
        text = path.read_text()
        for needle in ("innerHTML", "dangerouslySetInnerHTML", "insertAdjacentHTML", "outerHTML", "eval("):
            if needle in text:
                assert path.name == "markdown.js" and needle == "dangerouslySetInnerHTML", (path.name, needle)
    markdown = (SRC / "markdown.js").read_text()
    assert "const safe = useMemo(() => toSafeHtml(text, {" in markdown and "__html: safe }}" in markdown
    assert "purifyMath.sanitize(node, KATEX_OUTPUT)" in (SRC / "typeset.js").read_text()


def test_both_languages_have_every_string_the_screens_use() -> None:
    tables = {lang: set(json.loads((SRC / "i18n" / f"{lang}.json").read_text())) for lang in ("en", "pt")}
    assert tables["en"] == tables["pt"], tables["en"] ^ tables["pt"]
    used: set[str] = set()
    dynamic: set[str] = set()
    for path in SRC.rglob("*.js"):
        text = path.read_text()
        used |= set(re.findall(r"\bt\('([\w.]+)'", text))
        dynamic |= set(re.findall(r"\bt\(`([\w]+)\.\$\{", text))
    assert used - tables["en"] == set()
    for prefix in dynamic:  # e.g. status.${...}: at least the prefix has translations
        assert any(key.startswith(f"{prefix}.") for key in tables["en"]), prefix


def test_vendored_libraries_are_pinned_with_their_licences() -> None:
    vendor = FRONTEND_DIR / "vendor"
    pins = (vendor / "VERSIONS").read_text()
    for package in ("preact", "htm", "marked", "dompurify", "katex"):
        assert re.search(rf"^{package}@\d+\.\d+\.\d+ sha512-", pins, re.M), package
        assert (vendor / f"LICENSE.{package}").stat().st_size > 500
    assert re.search(r"^@highlightjs/cdn-assets@\d+\.\d+\.\d+ sha512-", pins, re.M)
    assert (vendor / "LICENSE.highlight").stat().st_size > 500
    assert re.search(r"^axe-core@\d+\.\d+\.\d+ sha512-", pins, re.M)


async def test_app_is_served_with_security_headers_and_gzip(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://studyai.test") as http:
        root = await http.get("/")
        assert root.status_code == 307 and root.headers["location"] == "/app/"
        page = await http.get("/app/", headers={"Accept-Encoding": "gzip"})
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "script-src 'self'" in CONTENT_SECURITY_POLICY
        assert "unsafe-inline" not in CONTENT_SECURITY_POLICY
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["x-frame-options"] == "DENY"
        assert '<script type="module" src="src/main.js"></script>' in page.text
        assert re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page.text) is None  # no inline script
        script = await http.get("/app/vendor/purify.es.mjs", headers={"Accept-Encoding": "gzip"})
        assert script.headers["content-encoding"] == "gzip"
        assert "javascript" in script.headers["content-type"]
        assert script.num_bytes_downloaded < len(script.content) / 2
        assert (await http.get("/app/missing.js")).status_code == 404
        assert (await http.get("/app/../pyproject.toml")).status_code == 404
    assert not any(path.startswith("/app") or path == "/" for path in app.openapi()["paths"])


def test_frontend_files_are_committed_sources() -> None:
    """No build step: what the browser loads is what is in the repository (ES modules, no bundle)."""
    index = (FRONTEND_DIR / "index.html").read_text()
    assert "src/main.js" in index
    for path in SRC.rglob("*.js"):
        for target in re.findall(r"from '([^']+)'", path.read_text()):
            assert target.startswith("."), f"{path.name} imports {target}: bare specifiers need a build"
            assert (path.parent / target).resolve().is_file(), (path.name, target)


def test_index_preloads_every_module() -> None:
    """The browser fetches every module at once instead of discovering imports level by level."""
    index = (FRONTEND_DIR / "index.html").read_text()
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([^"]+)">', index))
    modules = {str(p.relative_to(FRONTEND_DIR)) for p in SRC.rglob("*.js") if p.name != "main.js"}
    modules |= {str(p.relative_to(FRONTEND_DIR)) for p in (FRONTEND_DIR / "vendor").glob("*.*js")}
    assert preloaded == modules


def test_math_and_code_libraries_load_on_demand() -> None:
    """KaTeX and highlight.js are imported the first time a text has math or code: every file typeset.js
    names is vendored (each grammar, KaTeX's stylesheet and the fonts it names), none is preloaded."""
    vendor = FRONTEND_DIR / "vendor"
    typeset = (SRC / "typeset.js").read_text()
    for target in [*re.findall(r"import\('([^'`]+)'\)", typeset), "../vendor/katex/katex.min.css"]:
        assert (SRC / target).resolve().is_file(), target
    languages = re.search(r"const LANGUAGES = \[([^\]]*)\]", typeset)
    assert languages is not None
    for name in re.findall(r"'([\w-]+)'", languages.group(1)):
        assert (vendor / "highlight" / "languages" / f"{name}.min.js").is_file(), name
    assert {"rust", "python", "bash", "json"} <= set(re.findall(r"'([\w-]+)'", languages.group(1)))
    css = (vendor / "katex" / "katex.min.css").read_text()
    fonts = re.findall(r"url\(([^)]+)\)", css)
    assert len(fonts) >= 20 and all(f.endswith(".woff2") for f in fonts)
    assert all((vendor / "katex" / font).is_file() for font in fonts)
    index = (FRONTEND_DIR / "index.html").read_text()
    assert "katex" not in index and "highlight/" not in index


def test_readme_shows_the_screenshots() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    shots = FRONTEND_DIR.parent / "docs" / "screenshots"
    for name in re.findall(r"\(docs/screenshots/([\w-]+\.png)\)", readme):
        assert (shots / name).is_file(), name
    assert len(re.findall(r"docs/screenshots/", readme)) >= 6


async def test_api_docs_load_offline_from_vendored_assets(app: FastAPI) -> None:
    """/docs names no outside address: Swagger UI's script and style come from the app's own files."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://studyai.test") as http:
        page = await http.get("/docs")
        assert page.status_code == 200 and "SwaggerUIBundle" in page.text
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", page.text), page.text
        assets = re.findall(r"""(?:src|href)=["']?(/[^"' >]+)""", page.text)
        assert {Path(a).name for a in assets} >= {"swagger-ui-bundle.js", "swagger-ui.css"}
        for asset in assets:
            served = await http.get(asset)
            assert served.status_code == 200 and len(served.content) > 500, asset
        assert (await http.get("/redoc")).status_code == 404  # ReDoc would need a CDN
