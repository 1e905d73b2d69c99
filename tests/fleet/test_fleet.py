"""The fleet playbook (#23), for real: ansible-playbook with the shipped playbook, hosts on
this machine (Ansible's local connection, each with its own working folder), the smoke
profile through the unchanged scripts/bench.sh, the results brought back, checked and
committed on a branch of a clone of this repository.

One run of the playbook (``fleet``, once per module) serves the tests that read its outcome:
three hosts, two that bench and one made to fail, so each test asserts its own part of one
run (the two hosts' results on one branch, checked and on the site; the failing host named
and the others' results kept), and a second run checks that only what is missing is done."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

# One worker runs the module (make test's --dist loadgroup), so the fleet run is made once.
pytestmark = [pytest.mark.postgres, pytest.mark.site, pytest.mark.xdist_group("fleet")]

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
PLAYBOOK = Path("fleet") / "bench.yml"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_clone(folder: Path) -> Path:
    """A clone of this repository's committed state on a branch named main (whatever branch
    this checkout is on), with this checkout's .venv beside it."""
    target = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True)
    git(target, "switch", "-q", "-C", "main")
    (target / ".venv").symlink_to(VENV)
    return target


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    return make_clone(tmp_path)


def inventory(tmp_path: Path, hosts: dict[str, dict]) -> Path:
    for name, facts in hosts.items():
        facts.setdefault("kb_workdir", str(tmp_path / "hosts" / name))
    data = {
        "all": {
            "children": {"kb_servers": {"children": {"lab": {"hosts": hosts}}}},
            "vars": {
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "kb_venv_from": str(VENV),
                "kb_poll_s": 2,
                "fleet_profile": "smoke",
            },
        }
    }
    path = tmp_path / "inventory.yml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def playbook(clone: Path, inventory_file: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(clone / "fleet" / "ansible.cfg"),
        "ANSIBLE_LOCAL_TEMP": str(inventory_file.parent / "ansible-tmp"),
        "ANSIBLE_NOCOLOR": "1",
    }
    return subprocess.run(
        [str(VENV / "bin" / "ansible-playbook"), "-i", str(inventory_file), str(PLAYBOOK)],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def branch_files(clone: Path, branch: str) -> list[str]:
    return git(clone, "diff", "--name-only", f"main...{branch}").split()


#: The fleet run's hosts: two that bench (one named by kb_machine), one whose facts the bench
#: refuses (a RAID level that does not exist).
BENCHED = {"alpha": {}, "beta": {"kb_machine": "lab-b"}}
FAILING = {"delta": {"kb_set": {"storage.data.array.level": "raid99"}}}


@dataclass
class FleetRun:
    clone: Path
    folder: Path
    done: subprocess.CompletedProcess[str]
    branch: str
    files: list[str]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> FleetRun:
    """The playbook run once on the three hosts above, for the tests that read its outcome."""
    folder = tmp_path_factory.mktemp("fleet")
    clone = make_clone(folder)
    hosts = {name: dict(facts) for name, facts in {**BENCHED, **FAILING}.items()}
    done = playbook(clone, inventory(folder, hosts))
    found = git(clone, "branch", "--list", "fleet/*").split()
    assert found, done.stdout[-3000:] + done.stderr[-2000:]
    return FleetRun(clone, folder, done, found[-1], branch_files(clone, found[-1]))


def test_two_hosts_come_back_on_one_branch_checked_and_on_the_site(fleet: FleetRun):
    assert "'ok: alpha'" in fleet.done.stdout and "'ok: lab-b'" in fleet.done.stdout
    assert "[alpha] " in fleet.done.stdout and "trial 1/1" in fleet.done.stdout  # live progress
    for slug in ("alpha", "lab-b"):
        assert f"content/hardware/{slug}.md" in fleet.files
        assert any(f.startswith("data/runs/") and f"-{slug}-" in f for f in fleet.files)
        assert any(f.startswith("data/raw/") and f"-{slug}-" in f for f in fleet.files)
    clone = fleet.clone
    assert git(clone, "branch", "--show-current").strip() == "main"  # the checkout is untouched
    git(clone, "switch", "-q", fleet.branch)
    try:
        run = next(f for f in fleet.files if f.startswith("data/runs/") and "-alpha-" in f)
        assert "fleet lab" in (clone / run).read_text(encoding="utf-8")  # the fleet's name
        check = subprocess.run(
            [str(VENV / "bin" / "kb"), "check"], cwd=clone, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stdout[-2000:]
        site = subprocess.run(
            ["scripts/site.sh"], cwd=clone, capture_output=True, text=True, timeout=600
        )
        assert site.returncode == 0, site.stderr[-2000:]
        for slug in ("alpha", "lab-b"):
            assert (clone / "public" / "hardware" / slug / "index.html").is_file()
    finally:
        git(clone, "switch", "-q", "main")


def test_a_failing_host_is_named_and_the_others_results_are_kept(fleet: FleetRun):
    assert fleet.done.returncode != 0
    assert "FAILED: delta" in fleet.done.stdout and "raid99" in fleet.done.stdout
    assert "1 host(s) failed: delta" in fleet.done.stdout
    assert any("-alpha-" in f for f in fleet.files) and any("-lab-b-" in f for f in fleet.files)
    assert not any("delta" in f for f in fleet.files)


def test_a_second_run_does_only_what_is_missing(fleet: FleetRun):
    """Run again on the hosts that came back: nothing is benched again, nothing committed
    again, and with every host back the playbook exits 0."""
    hosts = {name: dict(facts) for name, facts in BENCHED.items()}
    again = playbook(fleet.clone, inventory(fleet.folder, hosts))
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert "Start profile" not in again.stdout
    assert "'ok: alpha'" in again.stdout and "'ok: lab-b'" in again.stdout
    assert git(fleet.clone, "log", "--oneline", f"main..{fleet.branch}").count("\n") == 1


def test_two_hosts_with_one_slug_are_refused_before_anything_runs(clone: Path, tmp_path: Path):
    hosts = {"one": {"kb_machine": "same"}, "two": {"kb_machine": "same"}}
    done = playbook(clone, inventory(tmp_path, hosts))
    assert done.returncode != 0
    assert "two hosts would publish the same machine slug (same, same)" in done.stdout
    assert "Start profile" not in done.stdout
    assert git(clone, "branch", "--list", "fleet/*") == ""
