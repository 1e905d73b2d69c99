#!/usr/bin/env bash
# server.sh — a throwaway PostgreSQL for one bench: initdb into the bench's temporary folder,
# start it listening only on a private Unix socket (no TCP), restart it with other settings,
# stop it, tell whether it is still alive.
#
# Contract: source it (after common.sh); functions only, prefix kb_server_.
# Inputs:   KB_PG_BINDIR (server binaries), KB_WORK (the bench's temporary folder, removed by the
#           caller's trap), KB_SERVER_OS_USER (default pgbench-kb: the OS user that runs the
#           server when the bench runs as root; PostgreSQL refuses to run as root).
# Sets:     KB_PGDATA, KB_SOCKET_DIR, KB_PGPORT, KB_SERVER_LOG, KB_SERVER_USER (who runs it).
# Failure:  kb_die with the reason and the last lines of the server's own log.

KB_SERVER_OS_USER="${KB_SERVER_OS_USER:-pgbench-kb}"
KB_SERVER_USER=""

# kb_server_as_owner CMD… — run a server command as the OS user that owns the cluster.
kb_server_as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u "$KB_SERVER_OS_USER" -- "$@"
  else
    "$@"
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

# kb_server_init — initdb a new cluster in $KB_WORK/pgdata (socket in $KB_WORK/socket).
kb_server_init() {
  KB_PGDATA="$KB_WORK/pgdata"
  KB_SOCKET_DIR="$KB_WORK/socket"
  KB_PGPORT="${KB_PGPORT:-5432}"
  KB_SERVER_LOG="$KB_WORK/log/server.log"
  mkdir -p "$KB_PGDATA" "$KB_SOCKET_DIR" "$KB_WORK/log"
  chmod 700 "$KB_PGDATA" "$KB_SOCKET_DIR"
  kb_server_ensure_os_user
  if [[ "$(id -u)" == 0 ]]; then
    chmod 711 "$KB_WORK"
    chown "$KB_SERVER_OS_USER" "$KB_PGDATA" "$KB_SOCKET_DIR" "$KB_WORK/log"
    kb_server_as_owner test -w "$KB_PGDATA" \
      || kb_die "the server user '$KB_SERVER_OS_USER' cannot reach $KB_WORK (a parent folder" \
        "is not searchable by other users): point TMPDIR at a folder it can reach, e.g. /tmp"
  fi
  local -a initdb_cmd=("$KB_PG_BINDIR/initdb" -D "$KB_PGDATA" -U postgres --auth=trust
    --encoding=UTF8 --locale=C --no-instructions)
  kb_server_as_owner "${initdb_cmd[@]}" >"$KB_WORK/initdb.log" 2>&1 \
    || kb_die "initdb failed: $(kb_tail "$KB_WORK/initdb.log")"
}

# kb_server_start [NAME=VALUE…] — start with the given settings (the harness's own settings
# keep the server on the private socket; a profile cannot override them).
kb_server_start() {
  local -a opts=()
  local setting
  for setting in "$@"; do
    opts+=(-c "$setting")
  done
  opts+=(-c "listen_addresses=" -c "unix_socket_directories=$KB_SOCKET_DIR"
    -c "port=$KB_PGPORT")
  local -a ctl=("$KB_PG_BINDIR/pg_ctl" -D "$KB_PGDATA" -l "$KB_SERVER_LOG" -w -t 120
    -o "$(printf '%q ' "${opts[@]}")" start)
  if ! kb_server_as_owner "${ctl[@]}" >"$KB_WORK/pg_ctl.log" 2>&1; then
    local why
    why="$(kb_tail "$KB_SERVER_LOG" 4)"
    [[ -n "$why" ]] || why="$(kb_tail "$KB_WORK/pg_ctl.log" 4)"
    kb_die "the server did not start: $why"
  fi
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
  if kb_server_alive; then
    kb_server_as_owner "$KB_PG_BINDIR/pg_ctl" -D "$KB_PGDATA" -m fast -w -t 30 stop \
      >/dev/null 2>&1 \
      || kb_server_as_owner "$KB_PG_BINDIR/pg_ctl" -D "$KB_PGDATA" -m immediate -w -t 30 stop \
        >/dev/null 2>&1 || true
    return 0
  fi
  # A postmaster killed with SIGKILL leaves its System V segment behind (key and id on line 7).
  local shm_key="" shm_id=""
  read -r shm_key shm_id < <(sed -n 7p "$KB_PGDATA/postmaster.pid" 2>/dev/null || true) || true
  if [[ "$shm_id" =~ ^[0-9]+$ && "$shm_key" =~ ^[0-9]+$ ]] && command -v ipcrm >/dev/null 2>&1; then
    ipcrm -m "$shm_id" >/dev/null 2>&1 || true
  fi
  rm -f "$KB_PGDATA/postmaster.pid"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "server.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
