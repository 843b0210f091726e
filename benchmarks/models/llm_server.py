"""The embedded chat model server's speed by engine and setting: prompt processing (prefill) and
generation, tokens per second, on the same prompts in one run.

    python -m benchmarks.models.llm_server [--repeats 3] [--configs 1,2,2fa] [--python-server PYTHON]

A config is threads, `fa` for flash attention; a `py` prefix runs llama-cpp-python's server (given the
python of an environment that has `llama-cpp-python[server]`, `--python-server`) instead of llama.cpp's
own llama-server that studyAI runs. llama-cpp-python's server computes the logits of every prompt token
unless `logits_all` is off, and refuses the log-probabilities that option scoring and the groundedness
judge's contrast check read without them: `py2fa` is how it served studyAI. Each repeat's prompt
starts with a new line so no prefix of it is cached. Run it on an idle machine; the report is
benchmarks/reports/llm_server.md."""

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import report_path, write_report
from core.llm.local import LOCAL_MODELS, LlamaServer, assemble
from core.observability import timing

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK = REPO_ROOT.parent / "shared" / "data" / "rust-book" / "src" / "ch04-01-what-is-ownership.md"


@dataclass(frozen=True)
class Config:
    name: str
    threads: int
    flash_attn: bool
    python_server: bool  # llama-cpp-python's server (with its default logits_all) instead of llama-server


def parse_configs(text: str) -> list[Config]:
    """`2fa` = 2 threads with flash attention; a leading `py` = llama-cpp-python's server."""
    configs = []
    for item in text.split(","):
        rest = item.removeprefix("py")
        flash = rest.endswith("fa")
        configs.append(Config(item, int(rest.removesuffix("fa")), flash, python_server=rest != item))
    return configs


class PythonServer(LlamaServer):
    """llama-cpp-python's server with the flags studyAI gave it before it moved to llama-server."""

    def __init__(self, *args: object, python: Path, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.python = python

    @property
    def command(self) -> list[str]:
        threads = str(self.threads)
        command = [
            str(self.python), "-m", "llama_cpp.server", "--model", str(self.model_path),
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.context_tokens),
            "--interrupt_requests", "False", "--n_threads", threads, "--n_threads_batch", threads,
        ]  # fmt: skip
        return command + (["--flash_attn", "True"] if self.flash_attn else [])


def prompt(repeat: int, chars: int) -> str:
    return f"Note {repeat}.\n" + BOOK.read_text()[:chars] + "\n\nSummarise the text above in detail."


def measure(base_url: str, text: str, max_tokens: int) -> tuple[float, int, int]:
    """Seconds, prompt tokens, completion tokens of one completion."""
    started = timing.mark()
    response = httpx.post(
        f"{base_url}/chat/completions",
        json={"messages": [{"role": "user", "content": text}], "max_tokens": max_tokens, "temperature": 0},
        timeout=600,
    )
    response.raise_for_status()
    usage = response.json()["usage"]
    return timing.elapsed_s(started), usage["prompt_tokens"], usage["completion_tokens"]


def run(
    config: Config, model_path: Path, repeats: int, chars: int, log_dir: Path, python: Path | None
) -> dict[str, float]:
    options = {
        "context_tokens": 4096, "threads": config.threads, "log_path": log_dir / "llm.log",
        "flash_attn": config.flash_attn,
    }  # fmt: skip
    if config.python_server:
        if python is None:
            raise SystemExit(f"{config.name}: --python-server names the python that has llama-cpp-python")
        server: LlamaServer = PythonServer(model_path, python=python, **options)
    else:
        server = LlamaServer(model_path, **options)  # type: ignore[arg-type]
    prefill, generation = [], []
    with server:
        measure(server.base_url, prompt(-1, 200), 4)  # warm up
        for repeat in range(repeats):
            seconds, prompt_tokens, _ = measure(server.base_url, prompt(repeat, chars), 1)
            prefill.append(prompt_tokens / seconds)
            short = f"Step {repeat}. Write a long essay about ownership in Rust."
            base, _, _ = measure(server.base_url, short, 1)
            seconds, _, completion_tokens = measure(server.base_url, short, 128)
            generation.append((completion_tokens - 1) / max(1e-6, seconds - base))
    return {"prefill tok/s": statistics.median(prefill), "generation tok/s": statistics.median(generation)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.models.llm_server", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configs", default="1,2,2fa", help="threads, 'fa' = flash attention, 'py' prefix")
    parser.add_argument("--python-server", type=Path, help="a python with llama-cpp-python[server]")
    parser.add_argument("--prompt-chars", type=int, default=2400, help="~600 tokens")
    parser.add_argument("--report", type=Path, default=report_path("llm_server"))
    args = parser.parse_args(argv)
    model_path = assemble(LOCAL_MODELS["qwen2.5-coder-1.5b-instruct"], REPO_ROOT / ".cache" / "models")
    log_dir = REPO_ROOT / ".cache" / "benchmarks"
    log_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for config in parse_configs(args.configs):
        figures = run(config, model_path, args.repeats, args.prompt_chars, log_dir, args.python_server)
        rows.append((config, figures))
        print(config.name, {k: round(v, 1) for k, v in figures.items()}, flush=True)
    lines = [
        "# Embedded chat model server: engine, threads and flash attention",
        "",
        "- **command**: "
        f"`python -m benchmarks.models.llm_server --repeats {args.repeats} --configs {args.configs}`",
        "- qwen2.5-coder-1.5b-instruct q4_k_m; medians of the repeats",
        "",
        "| setting | server | threads | flash attention | prefill tok/s | generation tok/s |",
        "|---|---|---:|---|---:|---:|",
    ]
    for config, figures in rows:
        lines.append(
            f"| {config.name} | {'llama-cpp-python' if config.python_server else 'llama-server'} |"
            f" {config.threads} | {config.flash_attn} |"
            f" {figures['prefill tok/s']:.1f} | {figures['generation tok/s']:.1f} |"
        )
    write_report(args.report, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
