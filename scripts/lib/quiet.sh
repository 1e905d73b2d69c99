#!/usr/bin/env bash
# quiet.sh — snapshots of what the machine is doing, taken right before and right after each
# trial's pgbench, so that `kb import` can tell how much else ran during it. Nothing is
# interpreted here (pgbench_kb/bench/quiet.py does that): the files are copies of /proc.
#
# Contract: source it (after common.sh); functions only, prefix kb_quiet_.
# Inputs:   KB_WATCHDOG_PID (runtime.sh), KB_PGDATA (a throwaway server) or KB_QUIET_SERVER_PID
#           (the postmaster of an existing server on this host, when it could be found).
# Writes:   FILE (key<TAB>value lines: taken_at, uptime, loadavg, clk_tck, stat (the cpu lines
#           of /proc/stat), root (bench, server, watchdog, tracer — the strace of an emulated
#           flush latency, KB_FLUSH_TRACER_PID: the processes whose trees are the bench's own), affinity (their Cpus_allowed_list)) and FILE.procs (every
#           /proc/PID/stat, one line each).

# kb_quiet_server_pid — the postmaster's PID, or nothing.
kb_quiet_server_pid() {
  local pid=""
  if [[ -n "${KB_PGDATA:-}" && -r "$KB_PGDATA/postmaster.pid" ]]; then
    read -r pid <"$KB_PGDATA/postmaster.pid" 2>/dev/null || pid=""
  elif [[ -n "${KB_QUIET_SERVER_PID:-}" ]]; then
    pid="$KB_QUIET_SERVER_PID"
  fi
  [[ "$pid" =~ ^[0-9]+$ ]] && printf '%s\n' "$pid"
  return 0
}

# kb_quiet_snapshot FILE — one snapshot (about 10 ms: a single cat of every /proc/PID/stat).
kb_quiet_snapshot() {
  local file="$1" server line name pid
  server="$(kb_quiet_server_pid)"
  {
    printf 'taken_at\t%s\n' "$(date +%s.%N)"
    read -r line </proc/uptime && printf 'uptime\t%s\n' "$line"
    read -r line </proc/loadavg && printf 'loadavg\t%s\n' "$line"
    printf 'clk_tck\t%s\n' "$(getconf CLK_TCK 2>/dev/null || echo 100)"
    while read -r line; do
      [[ "$line" == cpu* ]] && printf 'stat\t%s\n' "$line"
    done </proc/stat
    for name in bench server watchdog tracer; do
      case "$name" in
        bench) pid="$$" ;;
        server) pid="$server" ;;
        watchdog) pid="${KB_WATCHDOG_PID:-}" ;;
        tracer) pid="${KB_FLUSH_TRACER_PID:-}" ;;
      esac
      [[ "$pid" =~ ^[0-9]+$ ]] || continue
      printf 'root\t%s\t%s\n' "$name" "$pid"
      while read -r line; do
        [[ "$line" == Cpus_allowed_list:* ]] \
          && printf 'affinity\t%s\t%s\n' "$name" "${line#Cpus_allowed_list:}"
      done <"/proc/$pid/status" 2>/dev/null || true
    done
  } >"$file"
  # Processes come and go while the glob expands: a vanished one is simply not listed.
  cat /proc/[0-9]*/stat >"$file.procs" 2>/dev/null || true
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "quiet.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
