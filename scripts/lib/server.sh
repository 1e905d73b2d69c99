#!/usr/bin/env bash
# server.sh — a throwaway PostgreSQL for one bench: initdb into a temporary folder, start on a
# private Unix socket (no TCP), stop, remove. PostgreSQL refuses to run as root, so as root the
# server runs as an unprivileged system user (created when missing).
#
# Inputs (globals set by the caller): KB_PG_BINDIR (server binaries), KB_WORK (temporary folder).
# Sets: KB_PGDATA, KB_SOCKET_DIR, KB_PG_USER (OS user running the server), KB_PGPORT.

KB_SERVER_OS_USER="${KB_SERVER_OS_USER:-pgbench-kb}"

# kb_server_as_owner CMD… — run a server command as the OS user that owns the cluster.
kb_server_as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u "$KB_SERVER_OS_USER" -- "$@"
  else
    "$@"
  fi
}

kb_server_ensure_os_user() {
  [[ "$(id -u)" == 0 ]] || return 0
  if ! id -u "$KB_SERVER_OS_USER" >/dev/null 2>&1; then
    kb_log "creating system user '$KB_SERVER_OS_USER' to run PostgreSQL (it refuses root)"
    useradd --system --no-create-home --shell /usr/sbin/nologin "$KB_SERVER_OS_USER" \
      || kb_die "could not create the system user '$KB_SERVER_OS_USER' for the server"
  fi
}

# kb_server_init — initdb a new cluster in $KB_WORK/pgdata.
kb_server_init() {
  KB_PGDATA="$KB_WORK/pgdata"
  KB_SOCKET_DIR="$KB_WORK/socket"
  KB_PGPORT="${KB_PGPORT:-5432}"
  mkdir -p "$KB_PGDATA" "$KB_SOCKET_DIR"
  kb_server_ensure_os_user
  if [[ "$(id -u)" == 0 ]]; then
    chmod 755 "$KB_WORK"
    chown "$KB_SERVER_OS_USER" "$KB_PGDATA" "$KB_SOCKET_DIR"
  fi
  chmod 700 "$KB_PGDATA"
  local -a initdb_cmd=("$KB_PG_BINDIR/initdb" -D "$KB_PGDATA" -U postgres --auth=trust
    --encoding=UTF8 --locale=C --no-instructions)
  kb_server_as_owner "${initdb_cmd[@]}" >"$KB_WORK/initdb.log" 2>&1 \
    || kb_die "initdb failed (log: $KB_WORK/initdb.log): $(tail -n 3 "$KB_WORK/initdb.log")"
}

# kb_server_start [SETTING=VALUE…] — start (or restart) with the given settings.
kb_server_start() {
  local -a opts=(-c "listen_addresses=" -c "unix_socket_directories=$KB_SOCKET_DIR"
    -c "port=$KB_PGPORT")
  local setting
  for setting in "$@"; do
    opts+=(-c "$setting")
  done
  local -a ctl=("$KB_PG_BINDIR/pg_ctl" -D "$KB_PGDATA" -l "$KB_WORK/server.log" -w -t 60
    -o "$(printf '%q ' "${opts[@]}")" start)
  kb_server_as_owner "${ctl[@]}" >/dev/null 2>&1 \
    || kb_die "the server did not start (log: $KB_WORK/server.log): $(tail -n 3 "$KB_WORK/server.log")"
}

# kb_server_stop — fast shutdown; tolerant of a server that is already gone.
kb_server_stop() {
  [[ -n "${KB_PGDATA:-}" && -f "$KB_PGDATA/postmaster.pid" ]] || return 0
  kb_server_as_owner "$KB_PG_BINDIR/pg_ctl" -D "$KB_PGDATA" -m fast -w -t 60 stop \
    >/dev/null 2>&1 || true
}

# kb_psql SQL — run SQL as the superuser, stopping on the first error.
kb_psql() {
  "$KB_PG_BINDIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$KB_SOCKET_DIR" -p "$KB_PGPORT" \
    -U postgres -d "${KB_PGDATABASE:-postgres}" -c "$1"
}
