"""Where the review is posted (issue #33, attack 5): the poster's two decisions, made by the
real ``review/target.py`` script from JSON shaped as ``gh`` prints it, with head commits taken
from a real git repository."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from prs import git

from kbtest import REPO
from pgbench_kb.review.comment import MARK
from pgbench_kb.review.target import MARK as TARGET_MARK

TARGET = REPO / "scripts" / "pgbench_kb" / "review" / "target.py"


@pytest.fixture(scope="module")
def heads(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two real commits: the reviewed head and another."""
    root = tmp_path_factory.mktemp("target")
    git(root, "init", "-q", "-b", "main")
    (root / "a").write_text("a\n", encoding="utf-8")
    git(root, "add", "a")
    git(root, "commit", "-q", "-m", "one")
    first = git(root, "rev-parse", "HEAD")
    (root / "a").write_text("b\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "two")
    return git(root, "rev-parse", "HEAD"), first


def pr(number: object, sha: str, repo: str | None) -> dict:
    """One entry of `gh pr list --json number,headRefOid,headRepository,headRepositoryOwner`."""
    owner, _, name = (repo or "/").partition("/")
    return {
        "number": number,
        "headRefOid": sha,
        "headRepository": None if repo is None else {"id": "R_1", "name": name},
        "headRepositoryOwner": None if repo is None else {"id": "U_1", "login": owner},
    }


def target(tmp_path: Path, *args: str, data: object) -> subprocess.CompletedProcess[str]:
    """Run the real script (plain python3, as the posting job does) on ``data`` as JSON."""
    file = tmp_path / "input.json"
    file.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-I", str(TARGET), *args, str(file)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def find(tmp_path: Path, prs: list, sha: str, repo: str = "alice/pgbench-kb"):
    return target(tmp_path, "pull-request", "--head-sha", sha, "--head-repo", repo, data=prs)


def test_the_one_matching_pull_request_is_found(tmp_path: Path, heads: tuple[str, str]):
    head, other = heads
    done = find(tmp_path, [pr(2, other, "bob/pgbench-kb"), pr(5, head, "alice/pgbench-kb")], head)
    assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", "")


def test_a_forged_number_cannot_move_the_comment(tmp_path: Path, heads: tuple[str, str]):
    """Regression (#33, attack 5): the artifact's number was posted on. The number now comes
    only from the open pull request whose head is the reviewed commit: #7, the one a forged
    artifact would name, has another head and is never chosen — and there is no option by
    which a number could be given."""
    head, other = heads
    done = find(tmp_path, [pr(7, other, "alice/pgbench-kb"), pr(3, head, "alice/pgbench-kb")], head)
    assert done.stdout == "3\n"
    helped = subprocess.run(
        [sys.executable, "-I", str(TARGET), "pull-request", "--help"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "--number" not in helped and "example:" in helped


def test_the_same_commit_from_another_repository_is_not_the_reviewed_one(
    tmp_path: Path, heads: tuple[str, str]
):
    """Mallory opens a pull request from her fork with the commit of Alice's: only Alice's
    repository's pull request is the reviewed one (names compare without case, as GitHub's)."""
    head, _ = heads
    prs = [pr(9, head, "mallory/pgbench-kb"), pr(4, head, "Alice/PGBench-KB")]
    assert find(tmp_path, prs, head).stdout == "4\n"
    assert find(tmp_path, prs, head, "mallory/pgbench-kb").stdout == "9\n"


@pytest.mark.parametrize(
    ("prs", "why"),
    [
        ([], "no open pull request has head"),
        ([pr(1, "0" * 40, "alice/pgbench-kb")], "no open pull request has head"),
        ([pr(1, "HEAD", None)], "no open pull request has head"),
        ([pr(True, "HEAD", "alice/pgbench-kb")], "no open pull request has head"),
        ([pr("12", "HEAD", "alice/pgbench-kb")], "no open pull request has head"),
        (
            [pr(3, "HEAD", "alice/pgbench-kb"), pr(4, "HEAD", "alice/pgbench-kb")],
            "2 open pull requests (#3, #4) have that head",
        ),
    ],
    ids=["none open", "other head", "head repository deleted", "bool", "string", "several"],
)
def test_none_or_several_post_nothing_and_say_why(
    tmp_path: Path, heads: tuple[str, str], prs: list, why: str
):
    head, _ = heads
    prs = [{**p, "headRefOid": head if p["headRefOid"] == "HEAD" else p["headRefOid"]} for p in prs]
    done = find(tmp_path, prs, head)
    assert done.returncode == 3 and done.stdout == ""
    assert done.stderr.startswith("nothing posted: ") and why in done.stderr


def test_a_head_that_is_not_a_commit_id_matches_nothing(tmp_path: Path, heads: tuple[str, str]):
    done = find(tmp_path, [pr(1, "main", "alice/pgbench-kb")], "main")
    assert done.returncode == 3 and "is not a commit id" in done.stderr


def test_input_that_is_not_what_gh_prints_is_one_line(tmp_path: Path, heads: tuple[str, str]):
    done = target(tmp_path, "pull-request", "--head-sha", heads[0], "--head-repo", "a/b", data="[{")
    assert done.returncode == 2 and done.stderr.startswith("error: not JSON")
    assert len(done.stderr.splitlines()) == 1


def comment(ident: int, login: str, body: str) -> dict:
    return {"id": ident, "user": {"login": login, "type": "User"}, "body": body}


def test_the_bot_edits_only_its_own_comment_found_by_the_marker(tmp_path: Path):
    """Regression (#33, attack 5): `gh pr comment --edit-last` rewrote the bot's last comment,
    whatever it was. The bot's review comment is the one by its login that starts with the
    marker; a comment by anyone else that copies the marker is not it, nor a bot comment
    that only quotes it. `gh api --paginate` prints one array per page."""
    pages = (
        json.dumps([
            comment(10, "mallory", f"{MARK}\nI am the review now"),
            comment(11, "github-actions[bot]", "another bot message"),
            comment(12, "github-actions[bot]", f"quoting {MARK}"),
        ])
        + "\n"
        + json.dumps([comment(15, "github-actions[bot]", f"{MARK}\n### What this …")])
        + json.dumps([comment(20, "github-actions[bot]", f"{MARK}\n### a later copy")])
    )  # fmt: skip
    done = target(tmp_path, "comment", "--author", "github-actions[bot]", data=pages)
    assert (done.returncode, done.stdout) == (0, "15\n")
    none = target(tmp_path, "comment", data=[comment(10, "mallory", f"{MARK}\nx")])
    assert (none.returncode, none.stdout) == (0, "")


def test_the_comment_and_the_poster_use_one_marker():
    assert MARK == TARGET_MARK == "<!-- pgbench-kb-review -->"
