#!/usr/bin/env bash
# site.sh — build the static wiki: check the data, derive pages and chart specs, draw the
# charts, lay out with Hugo, index with Pagefind.
#
# Usage:   scripts/site.sh [--root DIR] [--timings] [--base-url URL]
#          --base-url (default: $KB_BASE_URL, else "/") is Hugo's baseURL: the address the site
#          is published at, e.g. https://OWNER.github.io/REPO/ (links stay relative either way).
# Inputs:  ROOT/data/runs/**.yaml (or ROOT/runs/ in a tree written by `kb synth`), ROOT/content/,
#          and ROOT's config.toml, layouts/ and static/ (this checkout's where ROOT has none).
# Writes:  ROOT/build/site/ (generated pages, data, chart specs), ROOT/build/charts/ (the
#          charts), ROOT/build/cache/ (prepared run files, drawn charts, kb check's results),
#          ROOT/public/ (the site, replaced whole) with ROOT/public/pagefind/; the site it
#          replaced waits in ROOT/build/public.old until the next build removes it.
# stdout:  one line per stage; with --timings, each stage's wall seconds, share of the whole
#          and CPU seconds, and the load average.
# stderr:  problems.
# Exit:    0 built; 1 `kb check` found errors or a stage failed (public/ is then left as it was:
#          the new site is built in a staging folder and moved into place only when complete).
set -Eeuo pipefail

SITE_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SITE_STAGING=""
SITE_WORK=""
SITE_START=""
SITE_OLD_PID=""
declare -a SITE_PIDS=()
declare -a SITE_STAGES=()
declare -a SITE_SECONDS=()
declare -a SITE_CPU=()

site_now() { date +%s.%N; }

# site_cpu — set SITE_CPU_NOW to the CPU seconds (user + system) of this process's finished
# children so far. `times` must run in this very process (a pipe or $(…) would fork, and a
# fork starts with no children), so it writes to a file.
SITE_CPU_NOW=0
site_cpu() {
  local file="$SITE_WORK/times.$BASHPID"
  times >"$file"
  SITE_CPU_NOW="$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%.2f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$file")"
  rm -f "$file"
}

# site_stage NAME START CPU — record the wall seconds of stage NAME since START and its CPU
# seconds CPU.
site_stage() {
  local name="$1" start="$2" cpu="$3"
  SITE_STAGES+=("$name")
  SITE_SECONDS+=("$(awk -v a="$start" -v b="$(site_now)" 'BEGIN { printf "%.2f", b - a }')")
  SITE_CPU+=("$cpu")
}

# site_timed CPU_FILE COMMAND… — run COMMAND, then write the CPU seconds it used to CPU_FILE
# (run in a subshell of its own, so only COMMAND's processes count).
site_timed() {
  local cpu_file="$1" status=0
  shift
  "$@" || status=$?
  site_cpu
  echo "$SITE_CPU_NOW" >"$cpu_file"
  return "$status"
}

# site_cleanup — on exit: stop a kb check still running beside derive, remove the scratch
# folder and a half-built staging folder.
site_cleanup() {
  local pid
  for pid in "${SITE_PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  [[ -z "$SITE_WORK" ]] || rm -rf "$SITE_WORK"
  [[ -z "$SITE_STAGING" ]] || rm -rf "$SITE_STAGING"
  # The previous site's removal is left to finish: no process outlives the build.
  [[ -z "$SITE_OLD_PID" ]] || wait "$SITE_OLD_PID" 2>/dev/null || true
}

# site_print_timings — each stage's wall seconds, share of the whole build's wall time, and CPU
# seconds. kb check runs beside kb derive, so the shares add up to more than 100 %.
site_print_timings() {
  local total i cpu=0
  total="$(awk -v a="$SITE_START" -v b="$(site_now)" 'BEGIN { printf "%.2f", b - a }')"
  for i in "${!SITE_STAGES[@]}"; do
    awk -v n="${SITE_STAGES[$i]}" -v s="${SITE_SECONDS[$i]}" -v t="$total" -v c="${SITE_CPU[$i]}" \
      'BEGIN { printf "  %-9s %7.2f s  %5.1f%%  %7.2f s CPU\n", n, s, (t > 0 ? 100 * s / t : 0), c }'
    cpu="$(awk -v a="$cpu" -v b="${SITE_CPU[$i]}" 'BEGIN { printf "%.2f", a + b }')"
  done
  printf '  %-9s %7.2f s  %6s  %7.2f s CPU  (* ran beside derive; load average %s)\n' \
    "total" "$total" "" "$cpu" "$(cut -d ' ' -f 1-3 /proc/loadavg 2>/dev/null || echo unknown)"
}

# site_hugo_config ROOT SOURCE OUT — write a Hugo config for ROOT whose mounts are absolute:
# ROOT's content and build/site, and the layouts and static files of SOURCE (ROOT or this
# checkout). This lets one set of layouts build any tree, a `kb synth` tree included.
site_hugo_config() {
  local root="$1" source="$2" out="$3" base_url="${4:-/}"
  sed -e "s#^baseURL = \".*\"#baseURL = \"$base_url\"#" \
    -e "s#^source = \"content\"#source = \"$root/content\"#" \
    -e "s#^source = \"build/\\(.*\\)\"#source = \"$root/build/\\1\"#" \
    -e "s#^source = \"layouts\"#source = \"$source/layouts\"#" \
    -e "s#^source = \"static\"#source = \"$source/static\"#" \
    "$source/config.toml" >"$out"
}

site_main() {
  local root timings=0 base_url="${KB_BASE_URL:-/}"
  root="$(cd "$SITE_HERE/.." && pwd)"
  while (($#)); do
    case "$1" in
      --root) root="$(cd "${2:?--root needs a folder}" && pwd)"; shift 2 ;;
      --timings) timings=1; shift ;;
      --base-url) base_url="${2:?--base-url needs an address}"; shift 2 ;;
      -h | --help) sed -n '2,/^set -E/p' "${BASH_SOURCE[0]}" | sed -e '/^set -E/d' -e 's/^# \{0,1\}//'; return 0 ;;
      *) echo "error: unknown option '$1' (see scripts/site.sh --help)" >&2; return 1 ;;
    esac
  done
  # The address goes into the Hugo configuration: only a plain http(s) URL ending in '/'.
  if [[ "$base_url" != "/" && ! "$base_url" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~-]+)*/$ ]]; then
    echo "error: --base-url '$base_url' is not an http(s) address ending in '/' (e.g. https://owner.github.io/repo/)" >&2
    return 1
  fi
  SITE_START="$(site_now)"
  local checkout bin
  checkout="$(cd "$SITE_HERE/.." && pwd)"
  bin="$checkout/.venv/bin"
  [[ -x "$bin/kb" ]] || { echo "error: no .venv/bin/kb: run 'make setup' first" >&2; return 1; }

  # A tree written by `kb synth` keeps its run files in ROOT/runs (never in data/runs).
  local -a check_args=() derive_args=(--root "$root")
  if [[ ! -d "$root/data/runs" && -d "$root/runs" ]]; then
    check_args=(--root "$root" "$root/runs" "$root/content/hardware")
    derive_args+=(--runs "$root/runs")
  fi
  local source="$root"
  [[ -f "$root/config.toml" && -d "$root/layouts" ]] || source="$checkout"

  # kb check and kb derive read the same files and neither writes what the other reads, so they
  # run side by side (two cores). The build stops after both if the check found errors, before
  # Hugo, so public/ is left as it was. Each stage's seconds count from the same start.
  local start report derived check_status check_end derive_status=0 check_pid
  # kb check keeps its per-file results in build/cache when that folder exists.
  mkdir -p "$root/build/cache"
  # The site the last build replaced (tens of thousands of files) is removed while this one
  # is built, not at its end, where the removal took up to a minute on a busy disk.
  if [[ -d "$root/build/public.old" ]]; then
    rm -rf "$root/build/public.old" &
    SITE_OLD_PID=$!
  fi
  SITE_WORK="$(mktemp -d "${TMPDIR:-/tmp}/kb-site.XXXXXX")"
  trap 'site_cleanup' EXIT
  start="$(site_now)"
  (
    cd "$root"
    "$bin/kb" check "${check_args[@]}" >"$SITE_WORK/check" &
    child=$!
    trap 'kill "$child" 2>/dev/null' TERM
    status=0
    wait "$child" || status=$?
    site_cpu
    printf '%s %s %s\n' "$status" "$(site_now)" "$SITE_CPU_NOW" >"$SITE_WORK/check.status"
  ) &
  check_pid=$!
  SITE_PIDS+=("$check_pid")
  derived="$(site_timed "$SITE_WORK/derive.cpu" "$bin/kb" derive "${derive_args[@]}")" ||
    derive_status=$?
  site_stage derive "$start" "$(cat "$SITE_WORK/derive.cpu" 2>/dev/null || echo 0)"
  wait "$check_pid" || true
  SITE_PIDS=()
  local check_cpu=0
  read -r check_status check_end check_cpu <"$SITE_WORK/check.status" || check_status=1
  report="$(cat "$SITE_WORK/check")"
  if ((check_status != 0)); then
    printf '%s\n' "$report" >&2
    echo "error: kb check found errors: fix them before building the site" >&2
    return 1
  fi
  ((derive_status == 0)) || return "$derive_status"
  SITE_STAGES=("check*" "${SITE_STAGES[@]}")
  SITE_SECONDS=("$(awk -v a="$start" -v b="$check_end" 'BEGIN { printf "%.2f", b - a }')" "${SITE_SECONDS[@]}")
  SITE_CPU=("$check_cpu" "${SITE_CPU[@]}")
  # Warnings do not stop the build, but they are said: the first few, then how many more.
  local warnings shown=5
  warnings="$(printf '%s\n' "$report" | grep -cE ': warning: ' || true)"
  printf '%s\n' "$report" | grep -E ': warning: ' | head -n "$shown" >&2 || true
  if ((warnings > shown)); then
    echo "… and $((warnings - shown)) more warning(s): \`make check\` lists them all" >&2
  fi
  printf '%s\n' "$report" | tail -n 1
  echo "$derived"

  # The charts kb derive wrote as Vega-Lite specs, drawn as SVG (each spec once: cached).
  local cpu
  site_cpu
  start="$(site_now)" cpu="$SITE_CPU_NOW"
  "$bin/kb" charts --root "$root"
  site_cpu
  site_stage charts "$start" "$(awk -v a="$cpu" -v b="$SITE_CPU_NOW" 'BEGIN { printf "%.2f", b - a }')"

  SITE_STAGING="$root/build/public.new"
  local staging="$SITE_STAGING"
  rm -rf "$staging"
  site_hugo_config "$root" "$source" "$root/build/hugo.toml" "$base_url"
  site_cpu
  start="$(site_now)" cpu="$SITE_CPU_NOW"
  # Hugo, the run and configuration pages only where their files changed (kb render).
  "$bin/kb" render --root "$root" --config "$root/build/hugo.toml" "$staging"
  site_cpu
  site_stage Hugo "$start" "$(awk -v a="$cpu" -v b="$SITE_CPU_NOW" 'BEGIN { printf "%.2f", b - a }')"
  start="$(site_now)" cpu="$SITE_CPU_NOW"
  # Pagefind, then its filter index rewritten in a fixed order (two builds: identical files).
  "$bin/kb" index "$staging" --cache "$root/build/cache/search" >/dev/null
  site_cpu
  site_stage Pagefind "$start" "$(awk -v a="$cpu" -v b="$SITE_CPU_NOW" 'BEGIN { printf "%.2f", b - a }')"
  if [[ -n "$SITE_OLD_PID" ]]; then
    wait "$SITE_OLD_PID" || true
    SITE_OLD_PID=""
  fi
  # Two renames: public/ is the old site or the new one, never a mix. The old one is removed
  # by the next build (or `make clean`).
  rm -rf "$root/build/public.old"
  [[ ! -d "$root/public" ]] || mv "$root/public" "$root/build/public.old"
  mv "$staging" "$root/public"
  SITE_STAGING=""
  echo "site: $root/public ($(find "$root/public" -name '*.html' | wc -l) pages)"
  if ((timings)); then
    site_print_timings
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  site_main "$@"
fi
