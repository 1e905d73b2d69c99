"""``kb diff BASE`` (#22 item 4): what a pull request does to the knowledge, on a real git
repository, with the real ``kb`` command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from planted import Planted, write_planted

from kbtest import copy_day_one, run_kb
from pgbench_kb.review.comment import MARK

#: A pull request that adds one machine with two configurations of three repeats each.
ADDED = (
    Planted("pr-base", 1000, n=3),
    Planted("pr-delay", 1300, n=3, settings={"commit_delay": 1000}),
)


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture(scope="module")
def pull_request(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = copy_day_one(tmp_path_factory.mktemp("diff") / "root", transcribed_only=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    write_planted(root, ADDED)
    return root


def test_diff_names_the_new_machine_its_runs_comparisons_and_findings(pull_request: Path):
    done = run_kb("diff", "main", "--root", str(pull_request), "--json")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["runs"]["added"] == 6 and found["runs"]["removed"] == 0
    (machine,) = found["runs"]["by_machine"]
    assert machine["machine"] == "synth-xeon-ssd" and len(machine["added"]) == 6
    (new,) = [c for c in found["comparisons"]["added"] if c["label"] == "commit_delay"]
    assert new["verdict"] == "higher" and new["change_pct"] == pytest.approx(30.0)
    assert any("commit_delay server default → 1000" in f for f in found["key_findings"]["added"])
    looks = "\n".join(found["look_at"])
    assert "new machine synth-xeon-ssd: no hardware note" in looks
    assert "a new key finding rests on one contributor's runs (kb synth)" in looks
    assert found["comparisons"]["removed"] == [] and found["verdicts_flipped"] == []


def test_diff_as_text_and_markdown(pull_request: Path):
    text = run_kb("diff", "main", "--root", str(pull_request))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("6 run(s) added, 0 changed, 0 removed;")
    assert "New comparisons\n  - synth-xeon-ssd: commit_delay:" in text.stdout
    markdown = run_kb("diff", "main", "--root", str(pull_request), "--markdown")
    assert markdown.stdout.startswith(MARK + "\n### What this change does to the knowledge")
    assert "**What to look at**" in markdown.stdout
    assert "<" not in markdown.stdout.replace(MARK, "").replace("\\<", "")


def test_diff_against_a_folder_equals_against_the_revision(pull_request: Path, tmp_path: Path):
    base = copy_day_one(tmp_path / "base", transcribed_only=True)
    by_folder = run_kb("diff", str(base), "--root", str(pull_request), "--json")
    by_revision = run_kb("diff", "main", "--root", str(pull_request), "--json")
    assert json.loads(by_folder.stdout) == json.loads(by_revision.stdout)


def test_nothing_changed_says_exactly_what_it_checked(pull_request: Path, tmp_path: Path):
    """Regression (#33, attack 2): a rewritten answer lead got "Nothing that the site publishes
    changes". kb diff compares data only, and its "nothing" names what it computed."""
    done = run_kb("diff", str(pull_request), "--root", str(pull_request), "--markdown")
    assert "Nothing that the site publishes changes" not in done.stdout
    assert (
        "Nothing changes in the runs, the tps comparisons and their verdicts, the key findings, "
        "the claims' verdicts and kb check's messages. (This compares data only: files outside "
        "data/ and content/ are not looked at.)"
    ) in done.stdout


@pytest.mark.parametrize("base", ["no-such-branch", "--help-me"])
def test_a_base_that_is_neither_folder_nor_revision_is_one_line(pull_request: Path, base: str):
    done = run_kb("diff", "--root", str(pull_request), "--", base)
    assert done.returncode != 0
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and "BASE" in line and "Traceback" not in done.stderr


def test_invented_transcribed_runs_on_a_new_machine_are_flagged(tmp_path: Path):
    """Regression (#22): two invented transcribed runs on a new machine became the home page's
    first key finding and passed check. kb check cannot know a source is invented; kb diff
    puts them in front of the reviewer: figures without raw output, a new machine without a
    note, a new key finding resting on one contributor's runs."""
    root = copy_day_one(tmp_path / "root", transcribed_only=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    source = sorted((root / "data/runs/2017/00").glob("*.yaml"))[0].read_text(encoding="utf-8")
    for suffix, fsync, tps in (("aaaa0001", "on", 95.0), ("aaaa0002", "off", 1900.0)):
        run_id = f"2017-invented-box-tpcb-like-s5000-c100-{suffix}"
        text = source.replace("2017-xeon-e5-1650v3-256gb-tpcb-like-s5000-c100-084df0a3", run_id)
        text = text.replace("machine: xeon-e5-1650v3-256gb", "machine: invented-box")
        text = text.replace("  tps: 5623.86", f"  tps: {tps}")
        text = text.replace("contributor: pgbench-kb maintainers", "contributor: mallory")
        text = text.replace("  settings:\n", f"  settings:\n    fsync: '{fsync}'\n", 1)
        (root / "data/runs/2017/00" / f"{run_id}.yaml").write_text(text, encoding="utf-8")
    done = run_kb("diff", "main", "--root", str(root), "--json")
    assert done.returncode == 0, done.stderr
    looks = "\n".join(json.loads(done.stdout)["look_at"])
    assert "2017-invented-box-tpcb-like-s5000-c100-aaaa0001: transcribed figures without" in looks
    assert "new machine invented-box: no hardware note" in looks


def test_no_new_comparison_says_why(tmp_path: Path):
    """Regression (issue 35): kb diff said "0 comparison(s) new" without saying why; one
    configuration of a new machine has nothing of its own to be compared with."""
    root = copy_day_one(tmp_path / "root", transcribed_only=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    write_planted(root, (Planted("pr-alone", 1000, n=3),))
    done = run_kb("diff", "main", "--root", str(root))
    assert done.returncode == 0, done.stderr
    first = done.stdout.splitlines()[0]
    assert first.startswith("3 run(s) added, 0 changed, 0 removed; 0 comparison(s) new (because ")
    assert "no other configuration of this machine to compare with" in first
