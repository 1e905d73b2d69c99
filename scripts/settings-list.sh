#!/usr/bin/env bash
# settings-list.sh — the settings one PostgreSQL build knows, for `kb check` to check run files'
# setting names and values against (scripts/pgbench_kb/runs/settings/pgMAJOR.tsv).
#
# Usage:    scripts/settings-list.sh BINDIR >scripts/pgbench_kb/runs/settings/pgMAJOR.tsv
#           e.g. scripts/settings-list.sh /usr/lib/postgresql/15/bin >scripts/pgbench_kb/runs/settings/pg15.tsv
# Does:     initdb a throwaway cluster in a temporary folder, start it on a private Unix socket
#           (as the unprivileged user pgbench-kb when run as root), read pg_settings, stop it.
# stdout:   a comment line naming the version and this script, then one tab-separated line per
#           setting: name, vartype, min_val, max_val, unit, enumvals (joined by '|'), boot_val
#           (the default, in the setting's unit) and context.
# stderr:   progress and errors; exit status 1 when the server cannot be started or read.
set -Eeuo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"
# shellcheck source=lib/server.sh
source "$here/lib/server.sh"

settings_list_main() {
  if [[ $# -ne 1 || ! -x "$1/postgres" ]]; then
    kb_die "usage: scripts/settings-list.sh BINDIR (the folder holding postgres, initdb," \
      "pg_ctl and psql, e.g. /usr/lib/postgresql/15/bin)"
  fi
  KB_PG_BINDIR="$(cd "$1" && pwd)"
  KB_WORK="$(mktemp -d "${TMPDIR:-/tmp}/kb-settings.XXXXXX")"
  trap 'kb_server_stop; rm -rf "$KB_WORK"' EXIT
  trap 'exit 130' INT TERM
  kb_server_init
  kb_server_start "listen_addresses="
  local version query
  version="$("$KB_PG_BINDIR/postgres" --version | sed -E 's/^[^0-9]*([0-9][^ ]*).*/\1/')"
  query="SELECT name, vartype, coalesce(min_val, ''), coalesce(max_val, ''),
    coalesce(unit, ''), coalesce(array_to_string(enumvals, '|'), ''),
    translate(coalesce(boot_val, ''), E'\\t\\n', '  '), context FROM pg_settings ORDER BY name"
  local -a psql=("$KB_PG_BINDIR/psql" -X -q -A -t -F $'\t' -v ON_ERROR_STOP=1
    -h "$KB_SOCKET_DIR" -p "$KB_PGPORT" -U postgres -d postgres -c "$query")
  printf '# PostgreSQL %s: pg_settings, written by scripts/settings-list.sh; do not edit\n' "$version"
  kb_server_as_owner "${psql[@]}"
}

settings_list_main "$@"
