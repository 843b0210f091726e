"""The class of benchmarks/load/load.py against a deployment scaled out: A API processes and M model
servers (LLM_BASE_URLS) beside 1 and 1, back to back in one run, on one Postgres and one Redis, with one
index and one agents worker. The model servers are benchmarks/fake_cpu_model.py's: each takes the
embedded model's measured time on a 2-core CPU (prefill, generation, slots sharing the cores, the prompt
cache), standing for model servers on machines of their own, which this machine cannot run for real.

Reported per configuration: streamed answers per minute (finished without error, from the run's start to
the last answer), the queue wait until the first answer event (p50, p95), errors, streamed answers equal
to their solo answer, and each model server's calls and peak calls at once (never above its slots).
Target: A=2, M=2 gives >= 1.8x the answers per minute of 1 and 1, at 0 errors.

    python -m benchmarks.load.scale_out [--apis 2] [--models 2] [--clients 32] [--seconds 60] [--drain 120]
"""

import argparse
import asyncio
import shlex
import sys
import tempfile
from contextlib import ExitStack
from datetime import datetime
from pathlib import Path
from typing import Any

from benchmarks.fake_cpu_model import BATCH_EXPONENT, GENERATE_TPS, PREFILL_TPS, SimulatedCpuModel
from benchmarks.fleet import Fleet, fleet_environment
from benchmarks.load.load import answers_per_minute
from benchmarks.load.load import run as run_class
from benchmarks.report import REPORTS, write_report
from benchmarks.stack import Stack
from core.runtime.services import EmbeddedServices
from core.settings import Settings
from core.store.sql.migrations import apply_migrations

SLOTS = 4  # each model server's, as the embedded server's default (LLM_SLOTS)
UNLIMITED = {f"RATE_LIMIT_{name}": "1000000/minute" for name in ("AGENT", "UPLOAD", "READ", "PER_ADDRESS")}


def run_configuration(apis: int, models: int, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="studyai-scale-") as scratch, ExitStack() as stack:
        root = Path(scratch)
        settings = Settings(_env_file=None, STUDYAI_DATA_DIR=root / "services")  # type: ignore[call-arg]
        urls = stack.enter_context(EmbeddedServices(settings))
        apply_migrations(urls.database_url)
        servers = [stack.enter_context(SimulatedCpuModel(slots=SLOTS)) for _ in range(models)]
        pool = ",".join(f"{server.url}={SLOTS}" for server in servers)
        env = fleet_environment(urls.database_url, urls.redis_url, pool, UNLIMITED)
        fleet = Fleet(root / "fleet", env)
        try:
            for n in range(apis):
                fleet.start_api(f"api-{n}")
            fleet.start_worker("index", "index")
            fleet.start_worker("agents", "agents")
            asyncio.run(fleet.wait_ready())
            first = fleet.apis[0]
            target = Stack(base=first.url, data_dir=root, process=first.process, env=env)
            bases = [api.url for api in fleet.apis]
            text, figures, out = asyncio.run(
                run_class(target, args.clients, args.seconds, args.drain, bases=bases)
            )
        finally:
            exits = fleet.stop()
        per_minute, _ = answers_per_minute(out)
        errors = [s for s in out.samples if s.status == 0 or (s.status >= 400 and not s.deliberate)]
        return {
            "apis": apis,
            "models": models,
            "answers_per_minute": per_minute,
            "queue_wait_p50_s": figures["queue_wait_p50_s"],
            "queue_wait_p95_s": figures["queue_wait_p95_s"],
            "errors": len(errors),
            "streams_equal": out.streams_equal,
            "streams_total": out.streams_equal + len(out.streams_differ),
            "still_waiting": out.streams_cancelled,
            "servers": [{"calls": s.calls, "peak": s.peak, "slots": SLOTS} for s in servers],
            "exits": exits,
            "detail": text,
        }


def table(results: list[dict[str, Any]]) -> str:
    base = results[0]["answers_per_minute"] or 1.0
    base_p95 = results[0]["queue_wait_p95_s"] or 1.0
    lines = [
        "| API processes | model servers | streamed answers / min | ratio | queue wait p50 / p95 s"
        " | p95 ratio | errors | equal to solo | still waiting after the drain"
        " | calls (peak at once) per server |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        servers = ", ".join(f"{s['calls']} ({s['peak']}/{s['slots']})" for s in r["servers"])
        lines.append(
            f"| {r['apis']} | {r['models']} | {r['answers_per_minute']:.1f}"
            f" | {r['answers_per_minute'] / base:.2f}"
            f" | {r['queue_wait_p50_s'] or 0:.1f} / {r['queue_wait_p95_s'] or 0:.1f}"
            f" | {(r['queue_wait_p95_s'] or 0) / base_p95:.2f} | {r['errors']}"
            f" | {r['streams_equal']} / {r['streams_total']} | {r['still_waiting']} | {servers} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--apis", type=int, default=2)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--drain", type=float, default=120)
    args = parser.parse_args(argv)
    given = argv if argv is not None else sys.argv[1:]
    command = shlex.join(["python", "-m", "benchmarks.load.scale_out", *given])
    results = [run_configuration(1, 1, args), run_configuration(args.apis, args.models, args)]
    ratio = results[1]["answers_per_minute"] / (results[0]["answers_per_minute"] or 1.0)
    header = (
        f"# Scaled out: {args.clients} clients for {args.seconds:.0f} s, 1 + 1 beside {args.apis} API"
        f" processes + {args.models} model servers\n\n{datetime.now().isoformat(timespec='seconds')};"
        f" `{command}`\n\nModel servers: benchmarks/fake_cpu_model.py ({PREFILL_TPS:g} prompt tokens/s,"
        f" {GENERATE_TPS:g} generated tokens/s alone, k calls at once k^{BATCH_EXPONENT} of one in all,"
        f" {SLOTS} slots each, a prompt cache), one Postgres and one Redis (embedded), one index and one"
        " agents worker.\n\n"
    )
    text = (
        header
        + table(results)
        + f"\n\n- answers per minute: **{ratio:.2f}x** (target >= 1.8x at 0 errors)\n"
        + "".join(f"\n## {r['apis']} + {r['models']}\n\n{r['detail']}\n" for r in results)
    )
    data = [{k: v for k, v in r.items() if k != "detail"} for r in results]
    print(write_report(REPORTS / "load-scale-out.md", text, data=data))
    print(text)


if __name__ == "__main__":
    main()
