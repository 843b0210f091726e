"""`python -m core.llm.server`: the embedded chat model as a service of its own.

docker-compose's `model` service (and any operator who wants the model on another machine) runs this:
it assembles the pinned weights, checks their sha256 (core/llm/local.py), then replaces itself with
llama.cpp's OpenAI-compatible server (llama-server), so the container's process is the server and its exit
code is the server's. The API and the workers reach it through LLM_BASE_URL=http://HOST:PORT/v1."""

import argparse
import os
import sys
from collections.abc import Sequence

from core.llm.local import LOCAL_MODELS, LlamaServer, assemble, server_command
from core.settings import Settings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m core.llm.server",
        description="Assemble and check the local chat model (LLM_LOCAL_MODEL), then serve it with "
        "llama.cpp's OpenAI-compatible server.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (0.0.0.0 in a container)")
    parser.add_argument("--port", type=int, default=8080, help="port to bind")
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    settings = Settings()
    model = LOCAL_MODELS[settings.llm.local_model]
    print(f"assembling and checking {model.name} in {settings.models_dir}", file=sys.stderr, flush=True)
    path = assemble(model, settings.models_dir)
    command = server_command(
        path,
        host=args.host,
        port=args.port,
        context_tokens=settings.llm.context_tokens,
        threads=settings.llm.threads,
        flash_attn=settings.llm.flash_attn,
        alias=model.name,
        parallel=settings.llm.slots,
    )
    print(f"serving {path.name} on http://{args.host}:{args.port}/v1", file=sys.stderr, flush=True)
    # The same allowlisted environment as the embedded server's: no variable of the container's reaches
    # the server's own settings (LLAMA_ARG_*, LLAMA_API_KEY), which would override or add to the flags above.
    os.execve(command[0], command, LlamaServer.environment())


if __name__ == "__main__":
    main()
