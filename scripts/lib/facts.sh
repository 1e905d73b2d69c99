#!/usr/bin/env bash
# facts.sh — record the facts of a machine and of a PostgreSQL server as raw command output, one
# file each, in a folder. Nothing is interpreted here: `kb import` (pgbench_kb/bench/facts.py) reads
# the files. A fact that cannot be read is left out (its file is absent), never invented.
#
# Contract: source it (after common.sh and target.sh); functions only, prefix kb_facts_.
# Inputs:   KB_PG_BINDIR, and the libpq environment that kb_psql uses.

# kb_facts_host DIR [LABEL=PATH…] — CPU, memory, OS, tuning, and the storage under each PATH.
kb_facts_host() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  if command -v lscpu >/dev/null 2>&1; then
    LC_ALL=C lscpu >"$dir/lscpu.txt" 2>/dev/null || rm -f "$dir/lscpu.txt"
  fi
  local source target
  for source in /proc/meminfo /etc/os-release /proc/mdstat /proc/cpuinfo \
    /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
    /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor /proc/sys/vm/swappiness \
    /proc/sys/vm/dirty_ratio /proc/sys/vm/dirty_background_ratio \
    /sys/class/dmi/id/sys_vendor /sys/class/dmi/id/product_name; do
    target="${source#/}"
    target="${target//\//_}"
    if [[ -r "$source" ]]; then
      cat "$source" >"$dir/$target.txt" 2>/dev/null || rm -f "$dir/$target.txt"
    fi
  done
  uname -srm >"$dir/uname.txt"
  nproc >"$dir/nproc.txt"
  getconf PAGESIZE >"$dir/pagesize.txt" 2>/dev/null || true
  hostname >"$dir/hostname.txt" 2>/dev/null || true
  if command -v systemd-detect-virt >/dev/null 2>&1; then
    systemd-detect-virt >"$dir/virt.txt" 2>/dev/null || true
  fi
  local spec label path
  for spec in "$@"; do
    label="${spec%%=*}"
    path="${spec#*=}"
    kb_facts_storage "$dir/storage-$label" "$path"
  done
  return 0
}

# kb_facts_storage PREFIX PATH — the mount, device, scheduler, read-ahead and disk under PATH.
kb_facts_storage() {
  local prefix="$1" path="$2"
  printf '%s\n' "$path" >"$prefix.path"
  command -v findmnt >/dev/null 2>&1 || return 0
  findmnt --json --output SOURCE,FSTYPE,OPTIONS,TARGET,MAJ:MIN --target "$path" \
    >"$prefix.findmnt.json" 2>/dev/null || rm -f "$prefix.findmnt.json"
  local majmin sys
  majmin="$(findmnt --noheadings --output MAJ:MIN --target "$path" 2>/dev/null | head -n 1)" \
    || return 0
  majmin="${majmin// /}"
  sys="/sys/dev/block/$majmin"
  [[ -n "$majmin" && -d "$sys" ]] || return 0
  # A partition has no queue of its own: its disk's is one folder up.
  [[ -d "$sys/queue" ]] || sys="$sys/.."
  [[ -d "$sys/queue" ]] || return 0
  local name
  local file
  for file in queue/scheduler queue/read_ahead_kb queue/rotational queue/logical_block_size \
    device/model size; do
    name="${file##*/}"
    if [[ -r "$sys/$file" ]]; then
      cat "$sys/$file" >"$prefix.$name.txt" 2>/dev/null || rm -f "$prefix.$name.txt"
    fi
  done
  basename "$(readlink -f "$sys")" >"$prefix.disk.txt"
  return 0
}

# kb_facts_postgres DIR DB — version, build, every non-default setting, pgbench's version.
kb_facts_postgres() {
  local dir="$1" db="$2"
  mkdir -p "$dir"
  kb_psql "$db" "SELECT version()" >"$dir/version.txt"
  kb_psql "$db" "SHOW server_version_num" >"$dir/version_num.txt"
  # The server's own build (a superuser view); else the local binaries' pg_config.
  kb_psql "$db" "SELECT name, setting FROM pg_config" >"$dir/pg_config.tsv" 2>/dev/null \
    || rm -f "$dir/pg_config.tsv"
  if [[ ! -s "$dir/pg_config.tsv" && "$KB_TARGET" != existing ]]; then
    "$KB_PG_BINDIR/pg_config" --configure >"$dir/pg_config-configure.txt" 2>/dev/null || true
  fi
  kb_psql "$db" "SELECT name, setting, coalesce(unit, ''), source, vartype
                 FROM pg_settings
                 WHERE source NOT IN ('default', 'override', 'client', 'session')
                 ORDER BY name" >"$dir/settings.tsv"
  "$KB_PG_BINDIR/pgbench" --version >"$dir/pgbench-version.txt" 2>&1 || true
  printf '%s\n' "$KB_TARGET" >"$dir/target.txt"
}

# kb_facts_data_dirs DB — "data=PATH wal=PATH" specs for kb_facts_host on the server's machine.
kb_facts_data_dirs() {
  local db="$1" data
  data="$(kb_psql "$db" "SHOW data_directory" 2>/dev/null)" || return 0
  [[ -n "$data" && -d "$data" ]] || return 0
  printf '%s\n' "data=$data" "wal=$data/pg_wal/"
}

# kb_facts_stats FILE DB VERSION_NUM — a snapshot of the counters a trial's deltas come from.
kb_facts_stats() {
  local file="$1" db="$2" version="$3"
  local -a queries=("SELECT 'bgwriter', row_to_json(s) FROM pg_stat_bgwriter s"
    "SELECT 'database', row_to_json(d) FROM pg_stat_database d
     WHERE datname = current_database()")
  if ((version >= 170000)); then
    queries+=("SELECT 'checkpointer', row_to_json(s) FROM pg_stat_checkpointer s")
  fi
  if ((version >= 160000)); then
    # Blocks client backends wrote themselves (to evict a dirty buffer): pg_stat_bgwriter's
    # buffers_backend until 16, only here from 17 on.
    queries+=("SELECT 'io_backend', json_build_object('writes', coalesce(sum(writes), 0))
               FROM pg_stat_io WHERE backend_type = 'client backend' AND object = 'relation'")
  fi
  if ((version >= 140000)); then
    queries+=("SELECT 'wal', row_to_json(s) FROM pg_stat_wal s")
  fi
  if ((version >= 100000)); then
    queries+=("SELECT 'wal_lsn', pg_current_wal_lsn()")
  fi
  local query
  : >"$file"
  for query in "${queries[@]}"; do
    kb_psql "$db" "$query" >>"$file" 2>/dev/null || true
  done
  printf 'taken_at\t%s\n' "$(date +%s.%N)" >>"$file"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  echo "facts.sh defines helpers for scripts/bench.sh; source it, do not run it" >&2
  exit 2
fi
