#!/usr/bin/env bash
# flush.sh — the storage fingerprint (how long a flush takes on the devices under the data and
# WAL folders, measured once per bench session) and the emulated commit flush latency (the
# throwaway server started under strace, which delays every fsync and fdatasync it makes).
# Nothing is interpreted here (pgbench_kb/bench/flush.py does that): the files are the tools'
# own output.
#
# Contract: source it (after common.sh and server.sh); functions only, prefix kb_flush_.
# Inputs:   KB_WORK, KB_PGDATA, KB_WAL_PATH, KB_PG_BINDIR, KB_SERVER_BINDIR (server.sh), KB_BIN
#           (the venv's bin folder: python runs the 8 kB write probe and picks the delay).
# Sets:     KB_FLUSH_WRAPPER (a postgres wrapper for pg_ctl -p, empty: the plain binary),
#           KB_FLUSH_TRACER_PID (the strace tracing the running server).
# Writes:   KB_WORK/flush/ — info.tsv (measured_at, tool, wal_sync_method, data_path,
#           data_device, wal_path, wal_device, data_pg_test_fsync), {wal,data}.pg_test_fsync.txt
#           (pg_test_fsync -s 1, stopped once it has timed the WAL's method with one 8 kB write;
#           the data's only when it is on another device), {data,wal}.probe.txt
#           (one line per 8 kB write + fdatasync, its milliseconds), unavailable (the reason,
#           when nothing could be measured), and per emulated level L: emulated-L.tsv (method,
#           added_us, target_ms, strace), emulated-L.pg_test_fsync.txt and emulated-L.probe.txt
#           (pg_test_fsync and the 8 kB write probe under the same injection, in the WAL folder).

KB_FLUSH_WRAPPER=""
KB_FLUSH_TRACER_PID=""
# The syscalls delayed: the ones PostgreSQL flushes with (wal_sync_method fdatasync or fsync,
# and the checkpointer's fsync of data files). O_DSYNC writes (open_datasync) are not.
KB_FLUSH_SYSCALLS="fdatasync,fsync"

# kb_flush_need_strace — stop, in one line, when strace is missing.
kb_flush_need_strace() {
  command -v strace >/dev/null 2>&1 && return 0
  kb_die "flush_ms emulates a commit flush latency with strace, which is not installed:" \
    "install it (Debian/Ubuntu: apt-get install strace; Fedora: dnf install strace) and run" \
    "the bench again (nothing was measured)"
}

# kb_flush_tracer ADDED_US — the strace command line (an array on stdout, one word a line) that
# traces fsync and fdatasync, adding ADDED_US microseconds to each when above 0.
kb_flush_tracer() {
  printf '%s\n' "$(command -v strace)" --seccomp-bpf -f -qq -e "trace=$KB_FLUSH_SYSCALLS"
  (($1 <= 0)) || printf '%s\n' -e "inject=$KB_FLUSH_SYSCALLS:delay_exit=$1"
  printf '%s\n' -o /dev/null
}

# kb_flush_pg_test_fsync OUTPUT DIR METHOD [TRACER…] — pg_test_fsync (1 s a test) on a file in
# DIR, stopped (SIGTERM: it removes its file) once it has timed METHOD with one 8 kB write, or
# after 30 s; under TRACER when given. Its output is OUTPUT.
kb_flush_pg_test_fsync() {
  local output="$1" dir="$2" method="$3"
  shift 3
  local file="$dir/kb-flush-test.tmp" pidfile="$KB_WORK/flush/pg_test_fsync.pid" pid="" waited
  rm -f "$pidfile"
  # The shell writes its PID, then becomes pg_test_fsync: under strace too, the PID to stop.
  # shellcheck disable=SC2016 # expanded by that shell
  "$@" sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$pidfile" \
    "$KB_PG_BINDIR/pg_test_fsync" -s 1 -f "$file" >"$output" 2>&1 8>&- 9>&- &
  local runner=$!
  for ((waited = 0; waited < 300; waited++)); do
    kill -0 "$runner" 2>/dev/null || break
    awk -v m="$method" '$1 == m { found = ($0 ~ /usecs\/op|n\/a/); exit }
      END { exit !found }' "$output" 2>/dev/null && break
    sleep 0.1
  done
  [[ ! -s "$pidfile" ]] || read -r pid <"$pidfile" || pid=""
  [[ ! "$pid" =~ ^[0-9]+$ ]] || kill -TERM "$pid" 2>/dev/null || true
  for ((waited = 0; waited < 50; waited++)); do
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$runner" 2>/dev/null || true
  [[ ! "$pid" =~ ^[0-9]+$ ]] || kill -KILL "$pid" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
  rm -f "$file" "$pidfile"
}

# kb_flush_fingerprint — measure the devices under KB_PGDATA and KB_WAL_PATH (the server
# stopped): pg_test_fsync for the server's wal_sync_method, and 8 kB writes each followed by
# fdatasync (about 3 s for the WAL's device, as much again for a data directory on another).
kb_flush_fingerprint() {
  local dir="$KB_WORK/flush" method label path data_device wal_device
  rm -rf "$dir"
  mkdir -p "$dir"
  chmod 755 "$dir"
  method="$(kb_server_as_owner "$KB_SERVER_BINDIR/postgres" -D "$KB_PGDATA" \
    -C wal_sync_method 2>/dev/null)" || method=""
  method="${method:-fdatasync}"
  data_device="$(findmnt --noheadings --output SOURCE --target "$KB_PGDATA" 2>/dev/null \
    | head -n 1)" || data_device=""
  wal_device="$(findmnt --noheadings --output SOURCE --target "$KB_WAL_PATH" 2>/dev/null \
    | head -n 1)" || wal_device=""
  {
    printf 'measured_at\t%s\ntool\tpg_test_fsync\nwal_sync_method\t%s\n' "$(kb_utc_iso)" "$method"
    printf 'data_path\t%s\ndata_device\t%s\n' "$KB_PGDATA" "$data_device"
    printf 'wal_path\t%s\nwal_device\t%s\n' "$KB_WAL_PATH" "$wal_device"
  } >"$dir/info.tsv"
  # The probe: both folders in one Python start.
  "$KB_BIN/python" -m pgbench_kb.bench.flush probe --into "$dir" "data=$KB_PGDATA" \
    "wal=$KB_WAL_PATH" 2>/dev/null || true
  if [[ ! -x "$KB_PG_BINDIR/pg_test_fsync" ]]; then
    printf 'no pg_test_fsync beside the server in %s\n' "$KB_PG_BINDIR" >"$dir/unavailable"
    return 0
  fi
  # pg_test_fsync once per device (it writes 16 MB first): the WAL's, then the data's when the
  # data directory is on another one.
  for label in wal data; do
    path="$KB_WAL_PATH"
    if [[ "$label" == data ]]; then
      path="$KB_PGDATA"
      if [[ -n "$data_device" && "$data_device" == "$wal_device" ]]; then
        printf 'data_pg_test_fsync\tsame device as the WAL\n' >>"$dir/info.tsv"
        break
      fi
    fi
    kb_flush_pg_test_fsync "$dir/$label.pg_test_fsync.txt" "$path" "$method"
  done
}

# kb_flush_unavailable REASON — no fingerprint this session (an existing server), and why.
kb_flush_unavailable() {
  rm -rf "$KB_WORK/flush"
  mkdir -p "$KB_WORK/flush"
  printf '%s\n' "$*" >"$KB_WORK/flush/unavailable"
}

# kb_flush_level LEVEL — make the server start with flush level LEVEL ('' or native: plainly;
# native-traced: under strace with no delay; N: a target total flush of N ms). The first time a
# session asks for a level, the delay is picked (target minus the native flush just measured)
# and pg_test_fsync and the probe under the same injection measure what it reaches. Sets
# KB_FLUSH_WRAPPER.
kb_flush_level() {
  local level="$1" dir="$KB_WORK/flush" added wrapper
  KB_FLUSH_WRAPPER=""
  [[ -n "$level" && "$level" != native ]] || return 0
  if [[ ! -s "$dir/emulated-$level.tsv" ]]; then
    if [[ "$level" == native-traced ]]; then
      added=0
    else
      added="$("$KB_BIN/python" -m pgbench_kb.bench.flush added --folder "$dir" \
        --target "$level")" || exit 1
    fi
    [[ "$added" =~ ^[0-9]+$ ]] || kb_die "could not pick the delay for a flush of $level ms"
    local -a tracer
    mapfile -t tracer < <(kb_flush_tracer "$added")
    kb_log "flush $level: checking the emulated latency (pg_test_fsync under strace," \
      "$added µs added to each fsync and fdatasync)"
    kb_flush_pg_test_fsync "$dir/emulated-$level.pg_test_fsync.txt" "$KB_WAL_PATH" \
      "$(sed -n 's/^wal_sync_method\t//p' "$dir/info.tsv")" "${tracer[@]}"
    "${tracer[@]}" "$KB_BIN/python" -m pgbench_kb.bench.flush probe --into "$dir" \
      "emulated-$level=$KB_WAL_PATH" 2>/dev/null || true
    printf 'level\t%s\nmethod\tstrace-inject\nadded_us\t%s\nstrace\t%s\n' "$level" "$added" \
      "$(strace -V 2>/dev/null | head -n 1)" >"$dir/emulated-$level.tsv"
  fi
  added="$(sed -n 's/^added_us\t//p' "$dir/emulated-$level.tsv")"
  wrapper="$dir/postgres-$level-$(basename "$(dirname "$KB_SERVER_BINDIR")")"
  {
    printf '#!/bin/sh\n# the server under strace: %s µs added to each fsync and fdatasync\n' \
      "$added"
    printf 'exec'
    printf ' %q' "$(command -v strace)" -D
    kb_flush_tracer "$added" | tail -n +2 | while read -r word; do printf ' %q' "$word"; done
    printf ' %q "$@"\n' "$KB_SERVER_BINDIR/postgres"
  } >"$wrapper"
  chmod 755 "$wrapper"
  KB_FLUSH_WRAPPER="$wrapper"
}

# kb_flush_copy TRIAL_DIR LEVEL — the session's fingerprint (and LEVEL's emulation) into the
# trial folder, for kb import.
kb_flush_copy() {
  local dir="$KB_WORK/flush" into="$1/flush" level="$2"
  [[ -d "$dir" ]] || return 0
  mkdir -p "$into"
  cp "$dir"/info.tsv "$dir"/*.probe.txt "$dir"/data.pg_test_fsync.txt \
    "$dir"/wal.pg_test_fsync.txt "$dir"/unavailable "$into/" 2>/dev/null || true
  if [[ -n "$level" && -s "$dir/emulated-$level.tsv" ]]; then
    cp "$dir/emulated-$level.tsv" "$into/emulated.tsv"
    cp "$dir/emulated-$level.pg_test_fsync.txt" "$dir/emulated-$level.probe.txt" "$into/" \
      2>/dev/null || true
    mv "$into/emulated-$level.pg_test_fsync.txt" "$into/emulated.pg_test_fsync.txt" 2>/dev/null \
      || true
    mv "$into/emulated-$level.probe.txt" "$into/emulated.probe.txt" 2>/dev/null || true
  fi
}

# kb_flush_note_tracer — after a start under strace: the tracer's PID (the postmaster's
# TracerPid), for the quietness record and for kb_flush_reap_tracer.
kb_flush_note_tracer() {
  KB_FLUSH_TRACER_PID=""
  [[ -n "$KB_FLUSH_WRAPPER" && -r "$KB_PGDATA/postmaster.pid" ]] || return 0
  local pid="" traced_by=""
  read -r pid <"$KB_PGDATA/postmaster.pid" || return 0
  traced_by="$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)" \
    || traced_by=""
  [[ "$traced_by" =~ ^[1-9][0-9]*$ ]] && KB_FLUSH_TRACER_PID="$traced_by"
  [[ -z "$KB_FLUSH_TRACER_PID" ]] || kb_runtime_set tracer "$KB_FLUSH_TRACER_PID"
  return 0
}

# kb_flush_reap_tracer — after the server stopped: the tracer ends with its last tracee; one
# still there after 5 s is killed.
kb_flush_reap_tracer() {
  [[ -n "${KB_FLUSH_TRACER_PID:-}" ]] || return 0
  local waited comm=""
  for ((waited = 0; waited < 50; waited++)); do
    kill -0 "$KB_FLUSH_TRACER_PID" 2>/dev/null || break
    sleep 0.1
  done
  { read -r comm <"/proc/$KB_FLUSH_TRACER_PID/comm"; } 2>/dev/null || comm=""
  [[ "$comm" != strace ]] || kill -KILL "$KB_FLUSH_TRACER_PID" 2>/dev/null || true
  KB_FLUSH_TRACER_PID=""
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "flush.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
