#!/usr/bin/env bash
# sampler.sh — what the machine and the server's backends were doing during a trial: one small
# bash process per trial (no process started per sample) that, from just before pgbench starts
# until it ends,
#   - each second copies the aggregate cpu line of /proc/stat and the /proc/diskstats lines of
#     the chosen whole devices into os.raw, and
#   - keeps one psql on a connection of its own, which repeats a prepared query about 20 times
#     a second (\watch 0.05) and appends one line per instant to waits.raw: the wait event
#     type/name of every pgbench backend of the bench database (application_name 'pgbench';
#     the sampler's own backend is excluded by pid and by its name, pgbench-kb-sampler).
# Nothing is interpreted here (pgbench_kb/bench/samplers.py does that at import). SAMPLERS=off
# turns both off (tests/perf/bench_samplers.py measures what they cost).
#
# Contract: source it (after common.sh); functions only, prefix kb_sampler_.
# Writes:   DIR/os.raw ("t<TAB>EPOCHREALTIME", "cpu<TAB>line", "disk<TAB>name fields…" per
#           second), DIR/waits.raw (psql -A -t lines: "backend<TAB>PID" first, then
#           "w<TAB>epoch<TAB>backends<TAB>type/event,…" per instant), DIR/waits.err, and
#           key<TAB>value lines in DIR/trial.tsv: samplers (on|off), sampler_devices,
#           wait_sampler (on, unavailable-version or unavailable-psql).

KB_SAMPLER_PID=""
KB_SAMPLER_DIR=""
# The query of one sampling instant (PostgreSQL 9.6 and later: wait_event_type, wait_event),
# prepared once: planning pg_stat_activity's joins at every instant cost its backend about
# 0.65 ms of CPU each time (1.3% of a core at 20 Hz); the prepared function scan costs a few
# microseconds.
KB_SAMPLER_PREPARE="PREPARE kb_waits AS SELECT 'w', extract(epoch FROM clock_timestamp()),
  count(*), coalesce(string_agg(coalesce(wait_event_type, '-') || '/' || coalesce(wait_event, '-'),
  ','), '') FROM pg_stat_get_activity(NULL)
  WHERE datid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND pid <> pg_backend_pid() AND application_name = 'pgbench';"

# kb_sampler_enabled — status 0 unless SAMPLERS=off.
kb_sampler_enabled() { [[ "${SAMPLERS:-on}" != off ]]; }

# kb_sampler_devices FACTS_DIR — the whole devices to sample: the disks under the data and WAL
# directories (facts.sh's storage-*.disk.txt), else every disk that is not virtual.
kb_sampler_devices() {
  local file name block
  local -A seen=()
  for file in "$1"/storage-*.disk.txt; do
    [[ -r "$file" ]] || continue
    read -r name <"$file" || continue
    [[ -n "$name" && -z "${seen[$name]:-}" ]] || continue
    seen[$name]=yes
    printf '%s\n' "$name"
  done
  ((${#seen[@]} == 0)) || return 0
  for block in /sys/block/*; do
    [[ -e "$block" ]] || continue
    [[ "$(readlink -f "$block")" != */virtual/* ]] || continue
    printf '%s\n' "${block##*/}"
  done
}

# kb_sampler_os_sample FD — one sample into FD: the time, /proc/stat's cpu line, the diskstats
# lines of the devices in kb_sampler_loop's WANT (read builtins only).
kb_sampler_os_sample() {
  local line name
  {
    printf 't\t%s\n' "$EPOCHREALTIME"
    read -r line </proc/stat && printf 'cpu\t%s\n' "$line"
    while read -r _ _ name line; do
      [[ -z "${want[$name]:-}" ]] || printf 'disk\t%s %s\n' "$name" "$line"
    done </proc/diskstats
  } >&"$1"
}

# kb_sampler_loop DIR PSQL DB COUNT DEVICE… — the sampler process itself (in the background, by
# kb_sampler_start). PSQL empty: no wait sampling; COUNT: instants psql 16+ stops after by itself.
# Ends on SIGTERM, or within a second once the bench is gone.
kb_sampler_loop() {
  local dir="$1" psql="$2" db="$3" count="$4"
  shift 4
  local -A want=()
  local name
  for name in "$@"; do want[$name]=yes; done
  local LC_ALL=C stop=0 q="" out idle psql_pid="" bench="$$"
  trap '' INT HUP PIPE
  trap 'stop=1' TERM
  # Nothing of the bench's output is held open: whoever reads it must see its end when the
  # bench ends, not when the sampler does.
  exec </dev/null >/dev/null 2>&1 8>&- 9>&-
  exec {out}>"$dir/os.raw"
  # Sleep without a process per tick: wait (read -t) for a line on DIR/sampler.fifo, opened
  # read-write so that it never reaches end-of-file; kb_sampler_stop writes "stop" there, which
  # ends the wait at once (a trapped signal would wait for read's timeout).
  exec {idle}<>"$dir/sampler.fifo"
  if [[ -n "$psql" ]]; then
    # psql repeats the prepared query itself (\watch, fractional since 9.6), so this loop
    # wakes once a second only; psql 16 and later also stop by themselves after COUNT.
    local watch='\watch 0.05'
    [[ -z "$count" ]] || watch="\\watch interval=0.05 count=$count"
    exec {q}> >(PGAPPNAME=pgbench-kb-sampler exec "$psql" -X -w -q -A -t -F $'\t' \
      -v ON_ERROR_STOP=1 -d "$db" >"$dir/waits.raw" 2>"$dir/waits.err")
    psql_pid=$!
    printf '%s\n' "SET client_min_messages = warning;" \
      "SELECT 'backend', pg_backend_pid();" "$KB_SAMPLER_PREPARE" "EXECUTE kb_waits $watch" \
      >&"$q" || q=""
  fi
  local now next wait_us secs line
  now="${EPOCHREALTIME//[.,]/}"
  next="$now"
  while ((!stop)); do
    kill -0 "$bench" 2>/dev/null || break
    kb_sampler_os_sample "$out"
    next=$((next + 1000000))
    now="${EPOCHREALTIME//[.,]/}"
    # Far behind (the machine was stalled): start again from now rather than catch up.
    ((now - next < 1000000)) || next="$now"
    wait_us=$((next - now))
    if ((wait_us > 0)); then
      printf -v secs '%d.%06d' $((wait_us / 1000000)) $((wait_us % 1000000))
      if read -r -t "$secs" -u "$idle" line && [[ "$line" == stop ]]; then
        stop=1
      fi
    fi
  done
  # The last second's sample, so that the series reaches pgbench's end.
  kb_sampler_os_sample "$out"
  if [[ -n "$psql_pid" ]]; then
    # Ctrl-C ends \watch; the end of its input then ends psql.
    [[ -z "$q" ]] || exec {q}>&-
    kill -INT "$psql_pid" 2>/dev/null || true
    wait "$psql_pid" 2>/dev/null || true
  fi
}

# kb_sampler_start DIR BINDIR DB VERSION_NUM FACTS_DIR SECONDS — start the samplers of a trial
# of SECONDS (nothing with SAMPLERS=off) and record in DIR/trial.tsv what was started. DB is
# what psql -d takes; VERSION_NUM the server's server_version_num.
kb_sampler_start() {
  local dir="$1" bindir="$2" db="$3" version="$4" facts="$5" seconds="$6"
  KB_SAMPLER_DIR="$dir"
  if ! kb_sampler_enabled; then
    printf 'samplers\toff\n' >>"$dir/trial.tsv"
    return 0
  fi
  local -a devices
  mapfile -t devices < <(kb_sampler_devices "$facts")
  local psql="$bindir/psql" waits=on count="" client major=0 minor=0
  client="$("$psql" --version 2>/dev/null)" || client=""
  if [[ "$client" =~ ([0-9]+)\.([0-9]+) ]]; then
    major="${BASH_REMATCH[1]}" minor="${BASH_REMATCH[2]}"
  fi
  if [[ ! "$version" =~ ^[0-9]+$ ]] || ((version < 90600)); then
    psql="" waits=unavailable-version
  elif ((major < 9 || (major == 9 && minor < 6))); then
    psql="" waits=unavailable-psql
  elif ((major >= 16)) && [[ "$seconds" =~ ^[0-9]+$ ]]; then
    count=$((seconds * 20 + 600))
  fi
  printf 'samplers\ton\nsampler_devices\t%s\nwait_sampler\t%s\n' "${devices[*]}" "$waits" \
    >>"$dir/trial.tsv"
  rm -f "$dir/sampler.fifo"
  mkfifo -m 600 "$dir/sampler.fifo"
  kb_sampler_loop "$dir" "$psql" "$db" "$count" "${devices[@]}" &
  KB_SAMPLER_PID=$!
}

# kb_sampler_ready — wait (at most 5 s) until the wait sampler's psql is connected (its first
# line is written), so that its start-up does not overlap pgbench's measured run.
kb_sampler_ready() {
  [[ -n "$KB_SAMPLER_PID" && -n "$KB_SAMPLER_DIR" ]] || return 0
  grep -q '^wait_sampler.on$' "$KB_SAMPLER_DIR/trial.tsv" 2>/dev/null || return 0
  local waited
  for ((waited = 0; waited < 100; waited++)); do
    [[ ! -s "$KB_SAMPLER_DIR/waits.raw" && ! -s "$KB_SAMPLER_DIR/waits.err" ]] || break
    kill -0 "$KB_SAMPLER_PID" 2>/dev/null || break
    sleep 0.05
  done
}

# kb_sampler_stop — end the samplers (SIGTERM; SIGKILL after 5 s).
kb_sampler_stop() {
  [[ -n "$KB_SAMPLER_PID" ]] || return 0
  # Read-write: never blocks, even when the sampler is gone.
  [[ ! -p "$KB_SAMPLER_DIR/sampler.fifo" ]] \
    || { printf 'stop\n' 1<>"$KB_SAMPLER_DIR/sampler.fifo"; } 2>/dev/null || true
  kill -TERM "$KB_SAMPLER_PID" 2>/dev/null || true
  local waited
  for ((waited = 0; waited < 50; waited++)); do
    kill -0 "$KB_SAMPLER_PID" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$KB_SAMPLER_PID" 2>/dev/null || true
  wait "$KB_SAMPLER_PID" 2>/dev/null || true
  KB_SAMPLER_PID=""
  rm -f "$KB_SAMPLER_DIR/sampler.fifo"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "sampler.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
