"""Schema-driven fuzzing of every route: schemathesis generates requests from the
app's own OpenAPI document, valid and invalid ones, and each answer is checked for three things:

- no 5xx (nor an exception out of the app);
- no id of the other party's rows, its user's email or a word only its document holds, in an answer
  to the fuzzing user (ids the request itself carried may be echoed back, e.g. in a 422);
- every 4xx is a JSON object with `detail`.

Two parties, each a user owning a project with an indexed document, questions, a QA thread, an
attempt and a plan. Path parameters named after a kind of row (`project_id`, `document_id`, ...), and
query parameters and body fields named `*_id` or `*_ids`, are replaced three times in four by a real
id of either party, so the fuzzing user probes its own rows and the other party's. Each valid case is
sent a second time with hostile values in its query and body (a NUL, bidi controls, a lone surrogate,
integers past bigint), which the generator does not make by itself. A pass fuzzes as one
party; the run makes two passes, each on a fresh pair (as A, then as B), and after each checks that
the other party's rows are all still there. DELETE routes run last in a pass, revoking keys last of
all, so a pass does not delete its own project before the routes under it are fuzzed.

The chat model is a fake OpenAI-compatible server that answers any structured request with a valid
object of its schema (benchmarks/fake_model.py), so agent routes run their whole path quickly.

    python benchmarks/faults/fuzz.py [--examples 50]   # per route and generation mode; writes reports/fuzz.md

tests/security/test_fuzz.py runs the same passes with a few examples per route, within CI's budget. The two
parties and their real ids: fuzz_parties.py; what each answer is checked for: fuzz_checks.py."""

import argparse
import asyncio
import sys
import tempfile
import time
import traceback
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.result import Ok
from schemathesis.python import asgi as schemathesis_asgi

sys.path.insert(
    0, str(Path(__file__).resolve().parents[2])
)  # `python benchmarks/faults/fuzz.py` from the root

from backend.main import create_app
from benchmarks.fake_model import SchemaChatServer
from benchmarks.faults.fuzz_checks import Failure, RouteStats, check, describe_case, hostile_variant
from benchmarks.faults.fuzz_parties import Party, World, add_real_ids, make_world, missing_rows
from benchmarks.report import report_path, write_report
from core.runtime.services import EmbeddedServices, ServiceUrls
from core.settings import Settings
from core.store.sql.migrations import apply_migrations
from evals.harness.worker import start_worker, stop_worker

REPORT = report_path("fuzz")
MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


# --- the run -------------------------------------------------------------------------------------


def _order(operations: list[Any]) -> list[Any]:
    """Reads and writes first, then deletes: the project's own delete after the rest, revoking keys
    (`/me/...`) last of all, so the fuzzing user keeps its project and key as long as possible."""

    def rank(op: Any) -> tuple[int, str, str]:
        if op.method.upper() != "DELETE":
            return (0, op.path, op.method)
        if op.path.startswith("/me"):
            return (3, op.path, op.method)
        return (2 if op.path == "/projects/{project_id}" else 1, op.path, op.method)

    return sorted(operations, key=rank)


def _send(case: Any, route: RouteStats, me: Party, victim: Party) -> None:
    route.cases += 1
    try:
        response = case.call(headers=me.headers, timeout=120)
    except Exception as error:  # the app raised: a 500 to a real client
        frames = traceback.extract_tb(error.__traceback__)
        ours = [f for f in frames if "site-packages" not in f.filename] or frames
        where = f"{type(error).__name__}: {str(error)[:200]} at {ours[-1].filename}:{ours[-1].lineno}"
        route.statuses[500] += 1
        route.failures.append(Failure("exception", route.route, 500, describe_case(case), where))
        return
    route.statuses[response.status_code] += 1
    for name, detail in check(case, response.status_code, response.content, victim):
        route.failures.append(Failure(name, route.route, response.status_code, describe_case(case), detail))


def _runner(
    strategy: Any, route: RouteStats, me: Party, victim: Party, examples: int, hostile: bool
) -> Callable[[], None]:
    """A Hypothesis test over one operation's cases that records each answer and what it broke; with
    `hostile`, each case is sent a second time as its hostile variant."""

    @hypothesis_settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,  # the same cases on every run
        database=None,
        phases=[Phase.explicit, Phase.generate],  # failures are collected, not shrunk
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        _send(case, route, me, victim)
        variant = hostile_variant(case, route.cases) if hostile else None
        if variant is not None:
            _send(variant, route, me, victim)

    return run


def fuzz_pass(
    app: FastAPI, world: World, actor: int, examples: int, log: Callable[[str], None] = print
) -> list[RouteStats]:
    """Fuzzes every operation as `world.parties[actor]`, `examples` cases per generation mode."""
    me, victim = world.parties[actor], world.parties[1 - actor]
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    add_real_ids(schema, world)
    operations = [r.ok() for r in schema.get_all_operations() if isinstance(r, Ok)]
    stats: list[RouteStats] = []
    for operation in _order(operations):
        route = RouteStats(f"{operation.method.upper()} {operation.path}")
        stats.append(route)
        for mode in MODES:
            try:
                strategy = operation.as_strategy(generation_mode=mode)
                _runner(strategy, route, me, victim, examples, hostile=mode.is_positive)()
            except Unsatisfiable:  # an operation without inputs has no invalid request to make
                if mode.is_positive:
                    route.errors.append("positive: no request could be generated")
            except Exception as error:  # generation itself failed (not the app)
                route.errors.append(f"{mode.value}: {type(error).__name__}: {str(error)[:200]}")
        log(f"  {route.route}: {route.cases} cases {dict(sorted(route.statuses.items()))}"
            f"{' FAILURES ' + str(len(route.failures)) if route.failures else ''}")  # fmt: skip
    return stats


def fuzz_settings(base: Settings) -> Settings:
    """The rate limiter on (it is fuzzed too) with budgets far above what a run sends: the fuzzer is one
    key at one address, and 429s for every case after the first minute would hide the routes behind."""
    budgets = base.rate_limits.model_dump()
    update: dict[str, Any] = {name: "1000000/minute" for name, v in budgets.items() if isinstance(v, str)}
    rate_limits = base.rate_limits.model_copy(update={**update, "enabled": True})
    return base.model_copy(update={"rate_limits": rate_limits})


@dataclass
class PassReport:
    actor: str
    routes: list[RouteStats]
    deleted: list[str]  # the other party's rows that were gone afterwards
    seconds: float

    def failures(self) -> list[Failure]:
        found = [f for r in self.routes for f in r.failures]
        gone = [Failure("rows deleted", "-", None, f"fuzzing as {self.actor}", row) for row in self.deleted]
        return found + gone


async def run_passes(
    setup_app: FastAPI,
    setup_http: httpx.AsyncClient,
    fuzz_app: FastAPI,
    examples: int,
    log: Callable[[str], None] = print,
) -> list[PassReport]:
    """Two passes, each on a fresh pair of parties: as A (probing B), then as B (probing A). The fuzz
    app runs in schemathesis's own event loop thread, so the passes run in a worker thread."""
    reports = []
    for actor in (0, 1):
        world = await make_world(setup_app, setup_http)
        me = world.parties[actor]
        log(f"pass as {me.name}: {sum(len(v) for v in me.ids.values())} own ids,"
            f" {len(world.parties[1 - actor].secrets())} of the other party's to watch for")  # fmt: skip
        started = time.monotonic()
        routes = await asyncio.to_thread(fuzz_pass, fuzz_app, world, actor, examples, log)
        deleted = await missing_rows(setup_app, world.parties[1 - actor])
        reports.append(PassReport(me.name, routes, deleted, time.monotonic() - started))
    return reports


def stop_fuzz_app() -> None:
    """Ends the lifespans schemathesis started for the apps it fuzzed (their pools and queues)."""
    schemathesis_asgi.shutdown_lifespans()


# --- the report ----------------------------------------------------------------------------------


def render(reports: list[PassReport], examples: int) -> str:
    lines = [
        "# Fuzz run: every route, two users, two projects",
        "",
        f"`python benchmarks/faults/fuzz.py --examples {examples}`: schemathesis {schemathesis.__version__},"
        f" {examples} examples per route and generation mode (positive and negative), derandomized; each"
        " positive case is sent again with hostile values in its query and body (a NUL, bidi controls, a"
        " lone surrogate, integers past bigint).",
        "Checks: no 5xx; no id, email or document word of the other party's in any answer; every 4xx a"
        " JSON object with `detail`; the other party's rows all still there after the pass.",
        "",
    ]
    for report in reports:
        failures = report.failures()
        total = sum(r.cases for r in report.routes)
        lines += [
            f"## As {report.actor} ({total} requests, {report.seconds:.0f} s, {len(failures)} failures)",
            "",
            "| route | cases | status codes | failures |",
            "|---|---:|---|---:|",
        ]
        for r in report.routes:
            codes = ", ".join(f"{code}×{n}" for code, n in sorted(r.statuses.items()))
            lines.append(f"| `{r.route}` | {r.cases} | {codes} | {len(r.failures)} |")
        errors = [f"`{r.route}` {e}" for r in report.routes for e in r.errors]
        if errors:
            lines += ["", "Generation errors (the fuzzer could not build cases; not app failures):", ""]
            lines += [f"- {e}" for e in errors]
        if report.deleted:
            lines += ["", f"Rows of the other party deleted: {', '.join(report.deleted)}"]
        first = {(f.check, f.route, f.status): f for f in reversed(failures)}
        if first:
            lines += ["", "First failure of each kind:", ""]
            lines += [
                f"- **{f.check}** `{f.route}` {f.status}: `{f.request[:200]}` → {f.detail[:300]}"
                for f in reversed(first.values())
            ]
        lines.append("")
    return "\n".join(lines)


@asynccontextmanager
async def running(settings: Settings, urls: ServiceUrls) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(settings, urls)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://fuzz.test", timeout=120) as http:
            yield app, http


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=50, help="cases per route and generation mode")
    parser.add_argument("--report", type=Path, default=REPORT)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(_env_file=None, STUDYAI_DATA_DIR=Path(tmp), DATABASE_URL=None, REDIS_URL=None)  # type: ignore[call-arg]
        with EmbeddedServices(base) as urls, SchemaChatServer() as model:
            apply_migrations(urls.database_url)
            urls = replace(urls, llm_base_url=model.url)
            worker = start_worker(urls, Path(tmp))
            try:
                async with running(base, urls) as (setup_app, http):
                    fuzz_app = create_app(fuzz_settings(base), urls)
                    try:
                        reports = await run_passes(setup_app, http, fuzz_app, args.examples)
                    finally:
                        stop_fuzz_app()
            finally:
                stop_worker(worker)
    text = render(reports, args.examples)
    write_report(args.report, text)
    print(text)
    print(f"report: {args.report}")
    if any(r.failures() for r in reports):
        sys.exit(1)


if __name__ == "__main__":
    asyncio.run(main())
