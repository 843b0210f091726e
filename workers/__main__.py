"""`python -m workers [--queue index|agents|all]`: `all` (the default) serves both queues in one process."""

import argparse
import sys

from core.settings import Settings
from workers.main import run

if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m workers", description="studyAI's arq workers.")
    parser.add_argument(
        "--queue",
        choices=("index", "agents", "all"),
        default="all",
        help="index: document indexing; agents: notes and groundedness judging; all: both (default)",
    )
    sys.exit(run(Settings(), parser.parse_args().queue))
