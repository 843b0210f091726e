"""The import rules, checked on the AST of every shipped module (imports inside functions included):

- layers, lowest first: core < agents < workers < backend < evals < benchmarks; a module imports its
  own layer and lower ones only;
- an agent package (agents/planner, agents/qa, ...) imports core, agents.common and itself, never
  another agent package; agents.common imports no agent package; a service above the agent packages
  (agents/runs) may import any of them;
- a domain package of the backend (backend/accounts, backend/documents, ...) imports itself, the web layer
  every domain shares (backend.web, backend.deps, backend.middleware, backend.resources), the domains
  below it (BACKEND_DOMAINS) and lower layers: never a domain above it, nor the app or command line;
- the store's domains (core/store/sql, accounts, runs, content, study, lowest first) import their own
  domain and lower ones only: every domain stands on sql, content's documents reset their index job
  (runs), study's questions read content's chunks;
- shipped code never imports `tests` (tests may import anything).

A module found by name at run time (importlib with a string) is not an import statement: that is how
the backend's CLI reaches the eval suites without depending on them."""

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("core", "agents", "workers", "backend", "evals", "benchmarks")  # lowest first
RANK = {layer: rank for rank, layer in enumerate(LAYERS)}
SHARED_AGENT_CODE = "common"
AGENT_SERVICES = frozenset({"runs"})  # above the agent packages: they run any agent
# The backend's domain packages, lowest first: each imports itself, the shared web layer and lower
# domains only (documents' models name a project's language; questions show QA's confidence; the study
# queue shows questions; projects name their creators and events by account; the mind map refuses as
# documents do). Accounts imports no other.
BACKEND_DOMAINS = (
    "accounts", "operations", "projects", "documents", "qa", "plans", "mindmap", "audio", "questions",
    "study",
)  # fmt: skip
DOMAIN_RANK = {domain: rank for rank, domain in enumerate(BACKEND_DOMAINS)}
SHARED_WEB = ("backend.web", "backend.deps", "backend.middleware", "backend.resources")
STORE_DOMAINS = ("sql", "accounts", "runs", "content", "study")  # core/store's packages, lowest first
STORE_RANK = {domain: rank for rank, domain in enumerate(STORE_DOMAINS)}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    imported: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: imports {self.imported}: {self.rule}"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a (possibly relative) `from ... import` names."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import in the tree; `from a import b` gives `a.b`, since b may be a
    module (`from agents import planner` imports the planner package)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module, is_package)
            for alias in node.names:
                yield node.lineno, base if alias.name == "*" else f"{base}.{alias.name}"


def broken_rule(module: str, imported: str) -> str | None:
    """Why `module` may not import `imported`, or None when it may."""
    layer, target = module.split(".")[0], imported.split(".")[0]
    if target == "tests":
        return "shipped code imports tests"
    if target in RANK and RANK[target] > RANK[layer]:
        return f"the {layer} layer imports the higher {target} layer"
    if layer == target == "agents" and "." in module and "." in imported:
        own, other = module.split(".")[1], imported.split(".")[1]
        if own not in AGENT_SERVICES and other not in (own, SHARED_AGENT_CODE):
            return f"agents.{own} imports the agent package agents.{other}"
    if layer == target == "backend" and "." in module and module.split(".")[1] in DOMAIN_RANK:
        own = f"backend.{module.split('.')[1]}"
        shared = any(imported == name or imported.startswith(name + ".") for name in (own, *SHARED_WEB))
        other = imported.split(".")[1] if "." in imported else ""
        lower = other in DOMAIN_RANK and DOMAIN_RANK[other] < DOMAIN_RANK[own.split(".")[1]]
        if not shared and not lower:
            return (
                f"the domain package {own} imports {imported} (only itself, the web layer and lower domains)"
            )
    return _store_rule(module, imported)


def _store_rule(module: str, imported: str) -> str | None:
    own, other = module.split(".")[:3], imported.split(".")[:3]
    if own[:2] != ["core", "store"] or other[:2] != ["core", "store"] or len(own) < 3 or len(other) < 3:
        return None
    if own[2] in STORE_RANK and STORE_RANK.get(other[2], -1) > STORE_RANK[own[2]]:
        return f"the store domain core.store.{own[2]} imports the higher core.store.{other[2]}"
    return None


def violations_in(source: str, module: str, path: str, is_package: bool = False) -> list[Violation]:
    tree = ast.parse(source, filename=path)
    return [
        Violation(path, line, imported, rule)
        for line, imported in imported_names(tree, module, is_package)
        if (rule := broken_rule(module, imported)) is not None
    ]


def shipped_violations(root: Path = REPO_ROOT) -> list[Violation]:
    found: list[Violation] = []
    for layer in LAYERS:
        for path in sorted((root / layer).rglob("*.py")):
            found += violations_in(
                path.read_text(encoding="utf-8"),
                module_name(path, root),
                str(path.relative_to(root)),
                is_package=path.name == "__init__.py",
            )
    return sorted(set(found), key=lambda v: (v.path, v.line, v.imported))


def test_shipped_code_follows_the_import_rules() -> None:
    found = shipped_violations()
    assert not found, "import rules broken:\n" + "\n".join(map(str, found))


def check(source: str, module: str, is_package: bool = False) -> list[str]:
    return [f"{v.line}: {v.imported}" for v in violations_in(source, module, "x.py", is_package)]


# Imports checked against the rule each would break, by rule: (module, source, what check() reports).
BY_RULE: dict[str, list[tuple[str, str, list[str]]]] = {
    # An upward import, at module or function level.
    "upward": [
        ("backend.cli.app", "def run() -> None:\n    from evals.qa.__main__ import main\n",
         ["2: evals.qa.__main__.main"]),
        ("core.text", "import os\nfrom backend.main import create_app\n", ["2: backend.main.create_app"]),
        ("workers.jobs", "import evals.stack\n", ["1: evals.stack"]),
        ("evals.stack", "from benchmarks import fake_model\n", ["1: benchmarks.fake_model"]),
        ("agents.qa.nodes", "async def node() -> None:\n    import workers.jobs\n", ["2: workers.jobs"]),
    ],
    # An agent package importing another.
    "agent-package": [
        ("agents.writer.prompts", "from agents.planner.prompts import excerpt\n",
         ["1: agents.planner.prompts.excerpt"]),
        ("agents.qa.choice", "from agents import groundedness\n", ["1: agents.groundedness"]),
        ("agents.qa.choose", "def f() -> None:\n    import agents.question_generator.checks\n",
         ["2: agents.question_generator.checks"]),
        ("agents.writer.graph", "from ..planner.state import PlanSection\n",
         ["1: agents.planner.state.PlanSection"]),
        ("agents.common.text", "from agents.qa import nodes\n", ["1: agents.qa.nodes"]),
        ("agents.planner.graph", "from agents.runs import run_agent\n", ["1: agents.runs.run_agent"]),
    ],
    # A domain package importing outside itself and the web layer.
    "domain-package": [
        ("backend.accounts.service.people", "from backend.projects import members\n",
         ["1: backend.projects.members"]),
        ("backend.accounts.routers.me", "from backend.documents import upload_budget\n",
         ["1: backend.documents.upload_budget"]),
        ("backend.accounts.schemas", "from backend.projects.schemas import Role\n",
         ["1: backend.projects.schemas.Role"]),
        ("backend.accounts", "def f() -> None:\n    import backend.main\n", ["2: backend.main"]),
        ("backend.qa.router", "from backend.study.schemas import QueueOut\n",
         ["1: backend.study.schemas.QueueOut"]),
        ("backend.documents.router", "from backend.cli import app\n", ["1: backend.cli.app"]),
    ],
    # A store domain importing a higher one (or a lower one: allowed).
    "store-domain": [
        ("core.store.sql.rows", "from core.store.accounts import accounts\n",
         ["1: core.store.accounts.accounts"]),
        ("core.store.runs.jobs", "from core.store.content.chunks import ChunkColumns\n",
         ["1: core.store.content.chunks.ChunkColumns"]),
        ("core.store.content.documents", "from core.store.runs.jobs import index_job_id\n", []),
        ("core.store.study.questions", "from core.store.sql.access import MEMBER\n", []),
    ],
}  # fmt: skip
PACKAGES = {"backend.accounts"}  # the modules above that are packages (their __init__)


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [pytest.param(*case, id=rule) for rule, cases in BY_RULE.items() for case in cases],
)
def test_an_import_breaking_a_rule_is_caught(module: str, source: str, expected: list[str]) -> None:
    assert check(source, module, is_package=module in PACKAGES) == expected


# Imports the rules allow, by where: (module, source, whether the module is a package).
ALLOWED: dict[str, list[tuple[str, str, bool]]] = {
    # A domain package importing itself, the web layer and lower layers.
    "domain-package": [
        ("backend.accounts.routers.me",
         "from backend.accounts.service import credentials\nfrom backend.deps import UserDep\n", False),
        ("backend.accounts.oidc",
         "from .flow import begin\nfrom backend.web.browser import public_base\n", True),
        ("backend.accounts.budgets",
         "from backend.middleware.rate_limits import RateLimited\nfrom core.store import accounts\n", False),
        ("backend.projects.router",
         "from backend.accounts.service.people import may_create_projects\n", False),
        ("backend.study.router", "from backend.questions.schemas import QuestionOut\n", False),
    ],
    # Layers importing lower ones, agent packages importing themselves and agents.common, names at run time.
    "layers-and-agents": [
        ("backend.main",
         "from core.settings import Settings\nfrom workers import jobs\nimport agents.qa.graph\n", False),
        ("benchmarks.load.load",
         "from evals.stack import api_session\nfrom backend.main import create_app\n", False),
        ("agents.writer.graph",
         "from agents.writer import config\nfrom agents.common.prose import shorten\n", False),
        ("agents.writer.graph", "from . import config\nfrom .state import SectionDraft\n", False),
        ("agents.qa", "from .graph import graph\n", True),
        ("backend.cli.app", "import importlib\nimportlib.import_module('evals.qa.__main__')\n", False),
        ("agents.common.contrast",
         "from agents.common.prose import plain\nfrom core.llm.chat import output_cap\n", False),
        ("agents.runs.service",
         "from agents.planner.graph import graph\nfrom agents.qa import graph as qa\n", False),
        ("workers.main", "import time\nfrom arq import Worker\n", False),
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("module", "source", "is_package"),
    [pytest.param(*case, id=where) for where, cases in ALLOWED.items() for case in cases],
)
def test_what_the_rules_allow_passes(module: str, source: str, is_package: bool) -> None:
    assert check(source, module, is_package) == []


@pytest.mark.parametrize(
    ("module", "source"),
    [
        ("evals.security", "from tests.security.cases import ANSWER_CASES\n"),
        ("benchmarks.faults.fuzz", "def main() -> None:\n    import tests.conftest\n"),
        ("core.store.sql.pool", "from tests import conftest\n"),
    ],
)
def test_shipped_code_importing_tests_is_caught(module: str, source: str) -> None:
    assert [v.rule for v in violations_in(source, module, "x.py")] == ["shipped code imports tests"]


def test_the_walk_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "agents" / "writer").mkdir(parents=True)
    (tmp_path / "core").mkdir()
    (tmp_path / "agents" / "writer" / "prompts.py").write_text(
        "import re\n\nfrom agents.planner import prompts\n"
    )
    (tmp_path / "core" / "db.py").write_text("def f() -> None:\n    from backend import main\n")
    assert [str(v) for v in shipped_violations(tmp_path)] == [
        "agents/writer/prompts.py:3: imports agents.planner.prompts: agents.writer imports the agent package"
        " agents.planner",
        "core/db.py:2: imports backend.main: the core layer imports the higher backend layer",
    ]
