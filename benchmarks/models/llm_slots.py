"""The embedded chat model server with 1, 2 or 4 parallel slots (llama.cpp's continuous batching) under
a class's load: answers per minute and each answer's time to first token and to its end, on the same
prompts in one run.

    python -m benchmarks.models.llm_slots [--slots 1,2,4,1d,1n] [--clients 4] [--rounds 2] [--max-tokens 96]

Each round sends `--clients` streamed completions at once, each a QA-like prompt: the same instructions,
then a different ~600-token passage of the Rust book and a question. A server with N slots splits its
context among them, so it gets N times the embedded server's context (each slot as large as the one slot
studyAI runs today). The server is llama.cpp's own llama-server as `core/llm/local.py` starts it, only
`--parallel` and `--ctx-size` changed; a count written with `d` ("1d") also drafts with the 0.5B model
(speculative decoding, llama.cpp's `--model-draft --spec-type draft-simple`), with `n` ("1n") drafts
continuations of the prompt's own n-grams (`--spec-type ngram-simple`: a RAG answer quotes its
passages). Run it on an idle machine; the report is benchmarks/reports/llm_slots.md. Issue 43 chose
the default slot count (LLM_SLOTS) from it."""

import argparse
import json
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.report import report_path, write_report
from core.llm.local import LOCAL_MODELS, LlamaServer, assemble
from core.observability import timing

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK = REPO_ROOT.parent / "shared" / "data" / "rust-book" / "src" / "ch04-01-what-is-ownership.md"
CONTEXT_PER_SLOT = 4096  # LLM_CONTEXT_TOKENS' default: the one slot's context today
INSTRUCTIONS = (
    "You answer a student's question from the course excerpts below only. Answer in two or three "
    "sentences and say which excerpt supports the answer."
)


@dataclass(frozen=True)
class Answer:
    first_token_s: float
    total_s: float
    completion_tokens: int


def messages(client: int, chars: int) -> list[dict[str, str]]:
    text = BOOK.read_text()
    start = (client * chars) % max(1, len(text) - chars)
    passage = text[start : start + chars]
    question = "What does the excerpt say about ownership, and why does it matter?"
    return [
        {"role": "system", "content": INSTRUCTIONS},
        {"role": "user", "content": f"{passage}\n\n{question}"},
    ]


def ask(base_url: str, client: int, chars: int, max_tokens: int) -> Answer:
    """One streamed completion: seconds to the first content token and to the end, tokens generated."""
    body = {
        "messages": messages(client, chars), "max_tokens": max_tokens, "temperature": 0, "stream": True,
        "stream_options": {"include_usage": True},
    }  # fmt: skip
    started = timing.mark()
    first = None
    tokens = 0
    with httpx.stream("POST", f"{base_url}/chat/completions", json=body, timeout=900) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = json.loads(line[6:])
            if event.get("usage"):
                tokens = event["usage"]["completion_tokens"]
            if first is None and any(c.get("delta", {}).get("content") for c in event.get("choices", [])):
                first = timing.elapsed_s(started)
    total = timing.elapsed_s(started)
    return Answer(first if first is not None else total, total, tokens)


def run(
    slots: int,
    model_path: Path,
    args: argparse.Namespace,
    log_dir: Path,
    draft: Path | None = None,
    speculative: str | None = None,
) -> dict[str, float]:
    name = f"{slots}{'d' if draft else 'n' if speculative else ''}"
    server = LlamaServer(
        model_path, parallel=slots, context_tokens=CONTEXT_PER_SLOT, threads=None,
        log_path=log_dir / f"llm-slots-{name}.log", flash_attn=True, draft_path=draft,
        speculative=speculative,
    )  # fmt: skip
    answers: list[Answer] = []
    wall = 0.0
    with server, ThreadPoolExecutor(max_workers=args.clients) as pool:
        ask(server.base_url, -1, 200, 4)  # warm up: the weights paged in
        for round_ in range(args.rounds):
            started = timing.mark()
            clients = [round_ * args.clients + n for n in range(args.clients)]
            answers += pool.map(
                lambda c: ask(server.base_url, c, args.prompt_chars, args.max_tokens), clients
            )
            wall += timing.elapsed_s(started)
    firsts = [a.first_token_s for a in answers]
    totals = [a.total_s for a in answers]
    return {
        "answers/min": 60 * len(answers) / wall,
        "generated tok/s": sum(a.completion_tokens for a in answers) / wall,
        "TTFT p50 s": statistics.median(firsts),
        "TTFT max s": max(firsts),
        "answer p50 s": statistics.median(totals),
        "answer max s": max(totals),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.models.llm_slots", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--slots", default="1,2,4", help="comma list of slot counts")
    parser.add_argument("--clients", type=int, default=4, help="streamed completions sent at once")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--prompt-chars", type=int, default=2400, help="~600 tokens of passage")
    parser.add_argument("--report", type=Path, default=report_path("llm_slots"))
    args = parser.parse_args(argv)
    models = REPO_ROOT / ".cache" / "models"
    model_path = assemble(LOCAL_MODELS["qwen2.5-coder-1.5b-instruct"], models)
    log_dir = REPO_ROOT / ".cache" / "benchmarks"
    log_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for config in args.slots.split(","):
        slots, kind = int(config.rstrip("dn")), config[-1]
        draft = assemble(LOCAL_MODELS["qwen2.5-coder-0.5b-instruct"], models) if kind == "d" else None
        speculative = "ngram-simple" if kind == "n" else None
        figures = run(slots, model_path, args, log_dir, draft, speculative)
        label = {"d": " + 0.5B draft", "n": " + n-gram drafts from the prompt"}.get(kind, "")
        rows.append((f"{slots}{label}", figures))
        print(slots, {k: round(v, 2) for k, v in figures.items()}, flush=True)
    columns = list(rows[0][1])
    lines = [
        "# Embedded chat model server: parallel slots under a class's load",
        "",
        f"- **command**: `python -m benchmarks.models.llm_slots --slots {args.slots} --clients {args.clients}"
        f" --rounds {args.rounds} --max-tokens {args.max_tokens}`",
        "- qwen2.5-coder-1.5b-instruct q4_k_m, llama-server, every core, flash attention; each slot"
        f" {CONTEXT_PER_SLOT} tokens of context; {args.clients} streamed answers at once,"
        f" {args.rounds} rounds",
        "",
        "| slots | " + " | ".join(columns) + " |",
        "|---:|" + "---:|" * len(columns),
    ]
    lines += [
        f"| {slots} | " + " | ".join(f"{figures[c]:.2f}" for c in columns) + " |" for slots, figures in rows
    ]
    write_report(args.report, "\n".join(lines), data=[{"slots": s, **f} for s, f in rows])
    print("\n".join(lines))


if __name__ == "__main__":
    main()
