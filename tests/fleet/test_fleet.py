"""The fleet playbook (#23), for real: ansible-playbook with the shipped playbook, two hosts on
this machine (Ansible's local connection, each with its own working folder), the smoke
profile through the unchanged scripts/bench.sh, the results brought back, checked and
committed on a branch of a clone of this repository; one host made to fail."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = [pytest.mark.postgres, pytest.mark.site]

REPO = Path(__file__).resolve().parents[2]
VENV = REPO / ".venv"
PLAYBOOK = Path("fleet") / "bench.yml"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A clone of this repository's committed state, with this checkout's .venv beside it."""
    target = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(target)], check=True)
    (target / ".venv").symlink_to(VENV)
    return target


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


def test_two_hosts_come_back_on_one_branch_checked_and_on_the_site(clone: Path, tmp_path: Path):
    done = playbook(clone, inventory(tmp_path, {"alpha": {}, "beta": {"kb_machine": "lab-b"}}))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "'ok: alpha'" in done.stdout and "'ok: lab-b'" in done.stdout
    assert "[alpha] " in done.stdout and "trial 1/1" in done.stdout  # the live progress line
    (branch,) = git(clone, "branch", "--list", "fleet/*").split()[-1:]
    files = branch_files(clone, branch)
    for slug in ("alpha", "lab-b"):
        assert f"content/hardware/{slug}.md" in files
        assert any(f.startswith("data/runs/") and f"-{slug}-" in f for f in files), files
        assert any(f.startswith("data/raw/") and f"-{slug}-" in f for f in files), files
    assert git(clone, "branch", "--show-current").strip() == "main"  # the checkout is untouched
    git(clone, "switch", "-q", branch)
    run = next(f for f in files if f.startswith("data/runs/") and "-alpha-" in f)
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

    git(clone, "switch", "-q", "main")
    again = playbook(clone, inventory(tmp_path, {"alpha": {}, "beta": {"kb_machine": "lab-b"}}))
    assert again.returncode == 0, again.stdout[-3000:]
    assert "Start profile" not in again.stdout  # only what is missing is done: nothing
    assert git(clone, "log", "--oneline", f"main..{branch}").count("\n") == 1


def test_a_failing_host_is_named_and_the_others_results_are_kept(clone: Path, tmp_path: Path):
    hosts = {"gamma": {}, "delta": {"kb_set": {"storage.data.array.level": "raid99"}}}
    done = playbook(clone, inventory(tmp_path, hosts))
    assert done.returncode != 0
    assert "'ok: gamma'" in done.stdout
    assert "FAILED: delta" in done.stdout and "raid99" in done.stdout
    assert "1 host(s) failed: delta" in done.stdout
    (branch,) = git(clone, "branch", "--list", "fleet/*").split()[-1:]
    files = branch_files(clone, branch)
    assert any("-gamma-" in f for f in files) and not any("delta" in f for f in files)


def test_two_hosts_with_one_slug_are_refused_before_anything_runs(clone: Path, tmp_path: Path):
    hosts = {"one": {"kb_machine": "same"}, "two": {"kb_machine": "same"}}
    done = playbook(clone, inventory(tmp_path, hosts))
    assert done.returncode != 0
    assert "two hosts would publish the same machine slug (same, same)" in done.stdout
    assert "Start profile" not in done.stdout
    assert git(clone, "branch", "--list", "fleet/*") == ""
