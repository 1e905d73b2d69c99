"""The changes page's history: git log read with NUL separators, every field validated
(issue #33), on a real git repository made in tmp_path."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pgbench_kb.derive.gitlog import history, read_log

OTHER = "0123456789abcdef0123456789abcdef01234567"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def commit(root: Path, relative: str, subject: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(subject.encode("unicode_escape").decode() + "\n", encoding="utf-8")
    git(root, "add", relative)
    git(root, "commit", "-q", "-m", subject)


def repository(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.email", "someone@example.com")
    git(root, "config", "user.name", "Someone")
    git(root, "config", "commit.gpgsign", "false")
    return root


def test_a_separator_in_a_commit_subject_forges_no_entry(tmp_path: Path) -> None:
    """Regression (#33, attack 11): a `\\x1e` in a commit subject forged an entry on the
    changes page, with a commit link that resolved to another repository."""
    root = repository(tmp_path)
    commit(root, "data/runs/a.yaml", "Add a run")
    forged = f"Add b\x1e{OTHER}\x1f0123456\x1f2001-01-01\x1ffsync off is safe/../../evil/x"
    commit(root, "data/runs/b.yaml", forged)
    commit(root, "content/guides/g.md", "A guide \u202egnp.exe\u200b with a bidi override")
    found = history(root)
    real = git(root, "rev-list", "HEAD").split()
    assert [c["commit"] for c in found["recent"]] == real
    assert [c["subject"] for c in found["recent"]] == [
        "A guide \\u202egnp.exe\\u200b with a bidi override",
        f"Add b\\x1e{OTHER}\\x1f0123456\\x1f2001-01-01\\x1ffsync off is safe/../../evil/x",
        "Add a run",
    ]
    assert [c["paths"] for c in found["recent"]] == [
        ["content/guides/g.md"],
        ["data/runs/b.yaml"],
        ["data/runs/a.yaml"],
    ]
    assert set(found["files"]) == {"content/guides/g.md", "data/runs/b.yaml", "data/runs/a.yaml"}
    for change in found["recent"]:
        assert change["commit"].startswith(change["short"]) and len(change["commit"]) == 40
        assert len(change["date"]) == 10 and change["date"][4] == "-"


def test_a_record_that_does_not_read_is_left_out_and_reading_goes_on() -> None:
    """Fields in the wrong form (a commit that is no sha, a date that is no date, a path
    outside the watched folders or with a control character) leave their record out."""
    good = f"{'a' * 40}\x00aaaaaaa\x002026-11-20\x00fine\x00\nA\x00data/runs/x.yaml\x00"
    output = (
        f"{good}"
        f"../../evil/commit/x\x00abc\x002026-11-20\x00bad commit\x00\nA\x00data/runs/y.yaml\x00"
        f"{'b' * 40}\x00bbbbbbb\x00yesterday\x00bad date\x00\nA\x00data/runs/z.yaml\x00"
        f"{'c' * 40}\x00ccccccc\x002026-11-21\x00bad path\x00\nA\x00../etc/passwd\x00"
        f"{'d' * 40}\x00ddddddd\x002026-11-22\x00control in path\x00\nM\x00content/a\nb.md\x00"
        f"{'e' * 40}\x00eeeeeee\x002026-11-23\x00renamed\x00"
        "\nR100\x00data/runs/p.yaml\x00data/runs/q.yaml\x00"
        "M\x00content/guides/g.md\x00"
    )
    read = [(change["subject"], changed) for change, changed in read_log(output)]
    assert read == [
        ("fine", [("A", "data/runs/x.yaml")]),
        ("renamed", [("R", "data/runs/q.yaml"), ("M", "content/guides/g.md")]),
    ]


def test_no_history_outside_a_repository(tmp_path: Path) -> None:
    assert history(tmp_path) == {"files": {}, "recent": []}
