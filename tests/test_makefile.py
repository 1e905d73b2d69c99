"""The Makefile contract: the targets the architecture names, a set-up that is a no-op when
nothing changed, and CI running exactly the README's test command."""

from __future__ import annotations

import re
import subprocess

import pytest

from kbtest import REPO

TARGETS = (
    "setup",
    "bench",
    "campaign",
    "fleet",
    "site",
    "serve",
    "check",
    "test",
    "lint",
    "perf",
    "clean",
)


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


def test_campaign_refuses_a_profile_it_does_not_have_before_running_any():
    done = make("campaign", "CAMPAIGN=memory nope")
    assert done.returncode != 0
    assert "error: CAMPAIGN names 'nope', which is not a campaign profile: give some of " in (
        done.stderr
    )
    assert "memory" in done.stderr.split("give some of ", 1)[1]
    assert "bench.sh" not in done.stdout  # nothing ran, not even the valid one before it


def test_campaign_runs_each_profile_in_turn_with_the_machine_and_contributor():
    """Bug: make campaign did not pass CONTRIBUTOR on, so campaign runs were credited to the
    git user whatever the operator declared."""
    done = make(
        "-n", "campaign", "CAMPAIGN=memory checkpoints", "MACHINE=box", "CONTRIBUTOR=Ann Lee"
    )
    assert done.returncode == 0, done.stderr
    assert (
        'for name in memory checkpoints; do MACHINE="box" CONTRIBUTOR="Ann Lee" scripts/bench.sh '
        '--profile "scripts/profiles/campaign/$name.yaml"; done' in done.stdout
    )
