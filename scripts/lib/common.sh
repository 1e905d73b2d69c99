#!/usr/bin/env bash
# common.sh — logging and small helpers shared by the bench scripts. Source it; it defines
# functions only (prefix kb_) and changes no state.

kb_log() { printf '%s [bench] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
kb_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# kb_need CMD… — stop with a clear message when a helper program is missing.
kb_need() {
  local cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || kb_die "'$cmd' is needed but not installed"
  done
}

# kb_utc_stamp — a compact UTC timestamp for names: 20261122T001500Z
kb_utc_stamp() { date -u +%Y%m%dT%H%M%SZ; }
