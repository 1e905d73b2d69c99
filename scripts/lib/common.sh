#!/usr/bin/env bash
# common.sh — logging, failure and small helpers shared by the bench scripts.
#
# Contract: source it; it defines functions only (prefix kb_) and changes no state.
# stderr:   kb_log writes "HH:MM:SS [bench] message"; kb_die writes "error: message" and exits 1.

# kb_log MESSAGE… — one line of progress on stderr.
kb_log() { printf '%s [bench] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

# kb_warn MESSAGE… — a warning that does not stop the bench.
kb_warn() { printf 'warning: %s\n' "$*" >&2; }

# kb_die MESSAGE… — stop the bench with one clear line; the caller's EXIT trap cleans up.
kb_die() {
  printf 'error: %s\n' "$*" >&2
  exit 1
}

# kb_need CMD… — stop with a clear message when a helper program is missing.
kb_need() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || kb_die "'$cmd' is needed but not installed"
  done
}

# kb_utc_stamp — a compact UTC timestamp for names: 20261122T001500Z
kb_utc_stamp() { date -u +%Y%m%dT%H%M%SZ; }

# kb_utc_iso — an ISO 8601 UTC timestamp: 2026-11-22T00:15:00Z
kb_utc_iso() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# kb_tail FILE [N] — the last N (3) lines of FILE on one line, for error messages.
kb_tail() {
  local file="$1" lines="${2:-3}"
  [[ -r "$file" ]] || return 0
  tail -n "$lines" "$file" | tr '\n' ' ' | sed -e 's/  */ /g' -e 's/ $//'
}

# kb_free_mb DIR — megabytes available to this user in the filesystem holding DIR.
kb_free_mb() {
  local avail bsize
  read -r avail bsize < <(stat -f -c '%a %S' "$1")
  printf '%s\n' $((avail * bsize / 1048576))
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "common.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
