#!/usr/bin/env bash
# A short, bounded fuzz run for CI (about 25 s): prints the number of inputs executed and
# fails when any input makes an exception other than a ToolRepairError escape.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_BUDGET="${FUZZ_SECONDS:-25}"

if python -c "import atheris" 2>/dev/null; then
  log="$(mktemp)"
  # libFuzzer writes a failing input next to this prefix, and exits non-zero.
  status=0
  python fuzz/fuzz_toolrepair.py -max_total_time="$SECONDS_BUDGET" -print_final_stats=1 \
    -artifact_prefix="${TMPDIR:-/tmp}/toolrepair-fuzz-" >"$log" 2>&1 || status=$?
  grep -v '^INFO: Instrumenting' "$log" | grep -E 'Done [0-9]+ runs|number_of_executed_units|ERROR|Traceback|crash-' || true
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$log"
  fi
  rm -f "$log"
  exit "$status"
else
  echo "atheris is not installed: deterministic random-input loop instead"
  python fuzz/fuzz_toolrepair.py --runs 1000000000 --seconds "$SECONDS_BUDGET"
fi
