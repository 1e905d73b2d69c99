#!/usr/bin/env bash
# runtime.sh — what a bench leaves behind when it cannot clean up (kill -9, a crash, a reboot)
# is found and removed: each bench records itself in a private runtime folder while it runs,
# a watchdog stops its server when the bench process is gone, and the next bench sweeps up
# whatever an earlier one left.
#
# Contract: source it (after common.sh and server.sh); functions only, prefix kb_runtime_.
# Folder:   ${XDG_RUNTIME_DIR:-/tmp}/pgbench-kb-UID (mode 0700, refused when it is not ours),
#           one file bench-PID.tsv per running bench: "key<TAB>value" lines (pid, starttime,
#           work, wal_work, pgdata, bindir, server_user, target, database, token).
# Sets:     KB_RUNTIME_DIR, KB_RUNTIME_FILE, KB_WATCHDOG_PID.
# stderr:   one line per earlier bench whose leftovers were removed.

KB_RUNTIME_DIR=""
KB_RUNTIME_FILE=""
KB_WATCHDOG_PID=""

# kb_runtime_folder — the runtime folder, made private; refuses one somebody else owns.
kb_runtime_folder() {
  KB_RUNTIME_DIR="${KB_RUNTIME_BASE:-${XDG_RUNTIME_DIR:-/tmp}}/pgbench-kb-$(id -u)"
  if [[ ! -d "$KB_RUNTIME_DIR" ]]; then
    mkdir -m 700 "$KB_RUNTIME_DIR" 2>/dev/null || [[ -d "$KB_RUNTIME_DIR" ]] \
      || kb_die "cannot create the runtime folder $KB_RUNTIME_DIR"
  fi
  if [[ -L "$KB_RUNTIME_DIR" || ! -O "$KB_RUNTIME_DIR" ]]; then
    kb_die "$KB_RUNTIME_DIR is not a folder of yours (a link, or another user's): remove it," \
      "or set XDG_RUNTIME_DIR to a private folder"
  fi
  chmod 700 "$KB_RUNTIME_DIR"
}

# kb_runtime_starttime PID — the process's start time in clock ticks since boot (field 22 of
# /proc/PID/stat): with the PID, it tells a process from a later one that reused the PID.
kb_runtime_starttime() {
  local stat="" rest
  # read, not $(cat …): the watchdog calls this every few seconds, and a fork each time would
  # be CPU taken from the bench it guards
  { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
  rest="${stat##*) }"
  local -a fields
  read -r -a fields <<<"$rest"
  printf '%s\n' "${fields[19]:-}"
}

# kb_runtime_running PID STARTTIME — status 0 while that very process runs (not a zombie).
kb_runtime_running() {
  local now state
  now="$(kb_runtime_starttime "$1")" || return 1
  [[ "$now" == "$2" ]] || return 1
  read -r _ _ state _ <"/proc/$1/stat" 2>/dev/null || return 1
  [[ "$state" != Z && "$state" != X ]]
}

# kb_runtime_open — record this bench (called once its temporary folder exists).
kb_runtime_open() {
  kb_runtime_folder
  KB_RUNTIME_FILE="$KB_RUNTIME_DIR/bench-$$.tsv"
  printf 'pid\t%s\nstarttime\t%s\nwork\t%s\n' "$$" "$(kb_runtime_starttime $$)" "$KB_WORK" \
    >"$KB_RUNTIME_FILE"
}

# kb_runtime_set KEY VALUE — add a fact to this bench's record (the last value of a key wins).
kb_runtime_set() {
  [[ -n "$KB_RUNTIME_FILE" && -f "$KB_RUNTIME_FILE" ]] || return 0
  printf '%s\t%s\n' "$1" "$2" >>"$KB_RUNTIME_FILE"
}

# kb_runtime_close — this bench cleaned up after itself: stop its watchdog, drop its record.
kb_runtime_close() {
  if [[ "$KB_WATCHDOG_PID" =~ ^[0-9]+$ ]]; then
    kill -TERM "$KB_WATCHDOG_PID" 2>/dev/null || true
    KB_WATCHDOG_PID=""
  fi
  [[ -z "$KB_RUNTIME_FILE" ]] || rm -f "$KB_RUNTIME_FILE" "$KB_RUNTIME_FILE.watchdog"
  KB_RUNTIME_FILE=""
}

# kb_runtime_get FILE KEY — the last value of KEY in a record.
kb_runtime_get() {
  awk -F '\t' -v key="$2" '$1 == key { value = substr($0, length(key) + 2) } END { print value }' \
    "$1" 2>/dev/null
}

# kb_runtime_stop_server PGDATA BINDIR USER — stop the server of another bench's record (its
# own variables, not this bench's); status 0 when one was running.
kb_runtime_stop_server() {
  # shellcheck disable=SC2034 # read by kb_server_stop and kb_server_alive
  local KB_PGDATA="$1" KB_PG_BINDIR="$2" KB_SERVER_BINDIR="$2"
  local KB_SERVER_OS_USER="${3:-$KB_SERVER_OS_USER}" running=1
  ! kb_server_alive || running=0
  kb_server_stop
  kb_server_kill_strays
  return "$running"
}

# kb_runtime_reap FILE — remove what the (gone) bench of a record left: stop its server, remove
# its temporary folder, drop the record. Prints what it did, in a few words (nothing if nothing).
kb_runtime_reap() {
  local file="$1" work pgdata bindir user child did=()
  work="$(kb_runtime_get "$file" work)"
  pgdata="$(kb_runtime_get "$file" pgdata)"
  bindir="$(kb_runtime_get "$file" bindir)"
  user="$(kb_runtime_get "$file" server_user)"
  child="$(kb_runtime_get "$file" child)"
  if [[ "$child" =~ ^[0-9]+:[0-9]+$ ]] && kb_runtime_running "${child%%:*}" "${child#*:}"; then
    kill -TERM "${child%%:*}" 2>/dev/null && did+=("stopped its pgbench")
  fi
  if [[ -n "$pgdata" && -d "$pgdata" ]]; then
    ! kb_runtime_stop_server "$pgdata" "$bindir" "$user" || did+=("stopped its server")
  fi
  if [[ -n "$work" && -d "$work" && "$(basename "$work")" == pgbench-kb.* ]]; then
    rm -rf "$work" && did+=("removed $work")
  fi
  local wal_work
  wal_work="$(kb_runtime_get "$file" wal_work)"
  if [[ -n "$wal_work" && -d "$wal_work" && "$(basename "$wal_work")" == pgbench-kb-wal.* ]]; then
    rm -rf "$wal_work" && did+=("removed $wal_work")
  fi
  rm -f "$file" "$file.watchdog"
  local IFS=,
  printf '%s\n' "${did[*]}" | sed 's/,/, /g'
}

# kb_runtime_sweep — before a bench starts: find the records of benches that are gone, clean up
# after them and say so in one line each. Records of running benches are left alone.
kb_runtime_sweep() {
  kb_runtime_folder
  local file pid start what db token
  for file in "$KB_RUNTIME_DIR"/bench-*.tsv; do
    [[ -f "$file" ]] || continue
    pid="$(kb_runtime_get "$file" pid)"
    start="$(kb_runtime_get "$file" starttime)"
    [[ "$pid" =~ ^[0-9]+$ ]] || {
      rm -f "$file"
      continue
    }
    ! kb_runtime_running "$pid" "$start" || continue
    db="$(kb_runtime_get "$file" database)"
    token="$(kb_runtime_get "$file" token)"
    what="$(kb_runtime_reap "$file")"
    if [[ -n "$db" && -n "$token" ]]; then
      # The database it created on an existing server stays until a bench there drops it: its
      # token (also in the database's comment) proves that it was ours.
      printf '%s\t%s\n' "$token" "$db" >>"$KB_RUNTIME_DIR/left-databases.tsv"
      what="${what:+$what, }left the database '$db' on a server (the next bench there drops it)"
    fi
    [[ -z "$what" ]] || kb_log "an earlier bench (pid $pid) ended without cleaning up: $what"
  done
}

# kb_runtime_left_token DATABASE COMMENT — status 0 when COMMENT carries the token of a bench of
# ours that is gone and had created DATABASE (see kb_runtime_sweep); prints the token.
kb_runtime_left_token() {
  local file="$KB_RUNTIME_DIR/left-databases.tsv" token db
  [[ -n "$KB_RUNTIME_DIR" && -f "$file" ]] || return 1
  while IFS=$'\t' read -r token db; do
    if [[ "$db" == "$1" && -n "$token" && "$2" == *"token $token"* ]]; then
      printf '%s\n' "$token"
      return 0
    fi
  done <"$file"
  return 1
}

# kb_runtime_forget_token TOKEN — the database of that token is gone (or adopted).
kb_runtime_forget_token() {
  local file="$KB_RUNTIME_DIR/left-databases.tsv"
  [[ -f "$file" ]] || return 0
  grep -v -F -e "$1" "$file" >"$file.new" || true
  mv -f "$file.new" "$file"
}

# kb_runtime_watchdog — a small process outside the terminal's process group that waits for
# this bench to end and, if it ended without cleaning up (kill -9), cleans up after it within
# a second or two. It ignores INT, TERM and HUP; kb_runtime_close ends it.
kb_runtime_watchdog() {
  local bench=$$ start file="$KB_RUNTIME_FILE" pid_file="$KB_RUNTIME_FILE.watchdog"
  start="$(kb_runtime_starttime $$)"
  # Started twice removed (the middle shell exits at once), so that it is not a child of the
  # bench: nothing the bench waits for can ever wait for the watchdog.
  (
    (
      trap '' INT HUP
      trap 'exit 0' TERM
      exec </dev/null >/dev/null 2>&1 8>&- 9>&-
      printf '%s\n' "$BASHPID" >"$pid_file"
      # Sleep without a process per second: wait for input that never comes on a pipe of our
      # own (read -t), checking every 2 s.
      local idle
      exec {idle}<> <(:)
      while kb_runtime_running "$bench" "$start"; do
        read -r -t 2 -u "$idle" _ || true
      done
      [[ -f "$file" ]] && kb_runtime_reap "$file" >/dev/null
      rm -f "$pid_file"
      exit 0
    ) &
  )
  local waited
  for ((waited = 0; waited < 50; waited++)); do
    [[ ! -s "$pid_file" ]] || break
    sleep 0.02
  done
  read -r KB_WATCHDOG_PID <"$pid_file" 2>/dev/null || KB_WATCHDOG_PID=""
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "runtime.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
