#!/usr/bin/env bash
# progress.sh — the live display of a bench: trial i of n, elapsed and remaining time, and the
# tps pgbench reports each second. bash does not read pgbench's output: a small Python watcher
# (python -m pgbench_kb.bench.ui progress) follows the trial's output file and draws the line.
#
# Contract: source it (after common.sh); functions only, prefix kb_progress_.
# Inputs:   KB_BIN (the venv's bin folder), BENCH_STARTED_EPOCH, BENCH_DONE_SECONDS.
# stderr:   on a terminal one line redrawn in place; otherwise a line every few seconds.

KB_PROGRESS_PID=""
KB_PROGRESS_READY=""
KB_TRIAL_SECONDS=()

# kb_progress_init PLAN_LINE… — remember each trial's planned seconds for the estimate.
kb_progress_init() {
  local line
  KB_TRIAL_SECONDS=()
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    KB_TRIAL_SECONDS+=("$(cut -d $'\x1e' -f 11 <<<"$line")")
  done
}

# kb_progress_note INDEX TOTAL WHAT — what the bench is doing between trials (terminal only).
kb_progress_note() {
  [[ -t 2 ]] || return 0
  printf '\r\033[Ktrial %s/%s: %s…' "$1" "$2" "$3" >&2
}

# kb_progress_start OUTPUT INDEX TOTAL SECONDS LABEL — follow a trial's output in the background.
# The watcher creates OUTPUT.ready once it has started (kb_progress_ready waits for it).
kb_progress_start() {
  local output="$1" index="$2" total="$3" seconds="$4" label="$5"
  local later=0 i
  for ((i = index; i < ${#KB_TRIAL_SECONDS[@]}; i++)); do
    later=$((later + KB_TRIAL_SECONDS[i]))
  done
  [[ -t 2 ]] || kb_log "trial $index/$total: $label"
  KB_PROGRESS_READY="$output.ready"
  rm -f "$KB_PROGRESS_READY"
  "$KB_BIN/python" -m pgbench_kb.bench.ui progress --output "$output" --trial "$index" \
    --of "$total" --seconds "$seconds" --later-seconds "$later" \
    --bench-started "$BENCH_STARTED_EPOCH" --done-seconds "$BENCH_DONE_SECONDS" \
    --label "$label" --parent "$$" --ready "$KB_PROGRESS_READY" 8>&- 9>&- &
  KB_PROGRESS_PID=$!
}

# kb_progress_ready — wait (at most 10 s) until the watcher has started: its start-up (Python
# and its imports) must not overlap pgbench's measured run.
kb_progress_ready() {
  [[ -n "$KB_PROGRESS_PID" && -n "${KB_PROGRESS_READY:-}" ]] || return 0
  local waited
  for ((waited = 0; waited < 200; waited++)); do
    [[ ! -e "$KB_PROGRESS_READY" ]] || break
    kill -0 "$KB_PROGRESS_PID" 2>/dev/null || break
    sleep 0.05
  done
  rm -f "$KB_PROGRESS_READY"
}

# kb_progress_stop — end the watcher (it clears its line).
kb_progress_stop() {
  [[ -n "$KB_PROGRESS_PID" ]] || return 0
  kill -TERM "$KB_PROGRESS_PID" 2>/dev/null || true
  wait "$KB_PROGRESS_PID" 2>/dev/null || true
  KB_PROGRESS_PID=""
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "progress.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
