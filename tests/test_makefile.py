"""The Makefile contract: the targets the architecture names, a set-up that is a no-op when
nothing changed, and CI running exactly the README's test command."""

from __future__ import annotations

import re
import subprocess

import pytest

from kbtest import REPO

TARGETS = ("setup", "bench", "fleet", "site", "serve", "check", "test", "lint", "perf", "clean")


def make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-C", str(REPO), *args], capture_output=True, text=True)


def test_help_is_the_default_and_lists_every_target():
    done = make()
    assert done.returncode == 0
    for target in TARGETS:
        assert re.search(rf"^\s+make {target}\s+\S", done.stdout, re.M), target


def test_setup_is_up_to_date_once_done():
    # `make -q` answers "is anything to do?" without doing it: 0 means the stamp keyed on
    # requirements.lock and pyproject.toml is current, so a second `make setup` installs nothing.
    assert make("-q", "setup").returncode == 0


@pytest.mark.parametrize("command", ["make bench && make site", "make test"])
def test_readme_shows_the_commands(command):
    assert command in (REPO / "README.md").read_text(encoding="utf-8")


def test_ci_runs_the_readme_test_command():
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^\s*make test\s*$", ci, re.M)


def test_fleet_without_an_inventory_says_what_to_give():
    done = make("fleet")
    assert done.returncode != 0
    assert "error: INVENTORY is not set: make fleet INVENTORY=fleet/inventory.yml" in done.stderr
    assert "ansible-playbook" not in done.stdout
