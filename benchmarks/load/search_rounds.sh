#!/usr/bin/env bash
# Interleaved before/after rounds of benchmarks/load/search_solo.py: POST /search timed alone in two
# checkouts of this repository (each with ../shared reachable), before then after in each round, each
# with its own work dir (indexed on its first round, reused after). Prints one JSON line per run.
#   benchmarks/load/search_rounds.sh BEFORE_CHECKOUT AFTER_CHECKOUT [ROUNDS=5] [WORKDIR_PREFIX=/tmp/ss]
set -euo pipefail
before=$(realpath "$1"); after=$(realpath "$2"); rounds=${3:-5}; prefix=${4:-/tmp/ss}
python=${PYTHON:-$(cd "$(dirname "$0")/../.." && pwd)/.venv/bin/python}
script_in() {  # the script's path in a checkout: it moved into benchmarks/load/ with the restructure
  if [ -f "$1/benchmarks/load/search_solo.py" ]; then echo "$1/benchmarks/load/search_solo.py"
  else echo "$1/benchmarks/search_solo.py"; fi
}
for round in $(seq 1 "$rounds"); do
  for side in before after; do
    checkout=${!side}
    result=$(cd "$checkout" && PYTHONPATH="$checkout" "$python" "$(script_in "$checkout")" \
      --workdir "$prefix-$side" --repeat 3 | tail -1)
    echo "{\"round\": $round, \"side\": \"$side\", \"result\": $result}"
  done
done
