#!/usr/bin/env bash
# facts.sh — record the facts of a machine and of the server as raw command output, one file
# each, in a folder. Nothing is interpreted here: `kb import` (pgbench_kb/facts.py) reads them.
# A fact that cannot be read is left out (its file is absent), never invented.

# kb_facts_host DIR PATH… — CPU, memory, OS and the storage under each PATH into DIR.
kb_facts_host() {
  local dir="$1"
  shift
  mkdir -p "$dir"
  command -v lscpu >/dev/null 2>&1 && LC_ALL=C lscpu >"$dir/lscpu.txt" 2>/dev/null
  cp /proc/meminfo "$dir/meminfo.txt" 2>/dev/null || true
  cp /etc/os-release "$dir/os-release.txt" 2>/dev/null || true
  uname -srm >"$dir/uname.txt"
  nproc >"$dir/nproc.txt"
  hostname >"$dir/hostname.txt" 2>/dev/null || true
  cat /sys/kernel/mm/transparent_hugepage/enabled >"$dir/thp.txt" 2>/dev/null || true
  cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor >"$dir/governor.txt" 2>/dev/null \
    || true
  [[ -r /proc/mdstat ]] && cp /proc/mdstat "$dir/mdstat.txt"
  local path index=0
  for path in "$@"; do
    index=$((index + 1))
    printf '%s\n' "$path" >"$dir/storage-$index.path"
    findmnt --noheadings --output SOURCE,FSTYPE,OPTIONS --target "$path" \
      >"$dir/storage-$index.findmnt" 2>/dev/null || true
  done
  return 0
}

# kb_facts_postgres DIR — version, build and every non-default setting of the running server.
kb_facts_postgres() {
  local dir="$1"
  mkdir -p "$dir"
  kb_psql "SELECT version()" >"$dir/version.txt"
  kb_psql "SHOW server_version_num" >"$dir/version_num.txt"
  "$KB_PG_BINDIR/pg_config" --configure >"$dir/pg_config-configure.txt" 2>/dev/null || true
  kb_psql "SELECT name || E'\t' || setting || E'\t' || coalesce(unit, '') || E'\t' || source
           FROM pg_settings
           WHERE source NOT IN ('default', 'override', 'client')
           ORDER BY name" >"$dir/settings.tsv"
}
