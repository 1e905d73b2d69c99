"""The GitHub workflows (issue #22, item 5; issue #33, item 1): actionlint passes on them (and
fails on a broken one, so the test can fail), actions are pinned by commit, the checkout keeps
no token, the review is computed by the base's code over the pull request's commit as data and
posted by a job that runs nothing else, the deploy builds for the Pages address, and every
install is checked against hashes."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
ACTIONLINT_VERSION = re.search(
    r"^ACTIONLINT_VERSION := (\S+)$", (REPO / "Makefile").read_text(), re.M
).group(1)
ACTIONLINT = REPO / ".venv" / f"actionlint-{ACTIONLINT_VERSION}" / "actionlint"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(?:/[\w./-]+)?@[0-9a-f]{40}$")


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as true
    return data


def steps(workflow: dict) -> list[tuple[str, dict]]:
    return [(job, step) for job, spec in workflow["jobs"].items() for step in spec["steps"]]


@pytest.fixture(scope="module")
def actionlint() -> Path:
    if not ACTIONLINT.exists():
        if shutil.which("go") is None:
            pytest.fail("actionlint is built with Go (make lint builds it): install Go")
        subprocess.run(["make", "-C", str(REPO), str(ACTIONLINT.relative_to(REPO))], check=True)
    return ACTIONLINT


def run_actionlint(actionlint: Path, *files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(actionlint),
            "-shellcheck",
            str(REPO / ".venv" / "bin" / "shellcheck"),
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_three_workflows_pass_actionlint(actionlint: Path) -> None:
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert [f.name for f in files] == ["check.yml", "deploy.yml", "review.yml"]
    result = run_actionlint(actionlint, *files)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_fails_on_a_broken_workflow(actionlint: Path, tmp_path: Path) -> None:
    """The test above can fail: an unknown runner label and a bad expression are reported."""
    broken = tmp_path / ".github" / "workflows" / "broken.yml"
    broken.parent.mkdir(parents=True)
    broken.write_text(
        "on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - run: echo ${{ github.event.nope( }}\n",
        encoding="utf-8",
    )
    result = run_actionlint(actionlint, broken)
    assert result.returncode != 0
    assert "broken.yml:6" in result.stdout


@pytest.mark.parametrize("name", ["check.yml", "deploy.yml", "review.yml"])
def test_actions_are_pinned_by_commit_and_the_checkout_keeps_no_token(name: str) -> None:
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    for job, step in steps(load(name)):
        if "uses" not in step:
            continue
        assert SHA_PIN.match(step["uses"]), f"{name}: {job}: {step['uses']} is not pinned by SHA"
        assert re.search(re.escape(step["uses"]) + r" # v\d+\.\d+\.\d+$", text, re.M), (
            f"{name}: {step['uses']}: say the release tag in a comment"
        )
        if step["uses"].startswith("actions/checkout@"):
            assert step["with"]["persist-credentials"] is False, f"{name}: {job}"
    assert load(name)["permissions"] == {"contents": "read"}


#: What running code looks like in a step: the poster may run nothing but the base's target.py.
RUNS_CODE = re.compile(r"\bmake\b|\.venv|\bkb\b|\bpip\b|\bsource\b|\bbash\b|\bsh\b|\./")
#: What names the pull request's own commit or ref.
PR_REF = re.compile(r"pull_request\.head|refs/pull|HEAD_SHA|merge")


def checkouts(job: dict) -> list[dict]:
    return [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]


def writes(job: dict) -> bool:
    return any(v == "write" for v in (job.get("permissions") or {}).values())


def test_check_runs_the_pull_requests_code_with_a_read_only_token_and_posts_nothing() -> None:
    """Regression (#33, attack 4): check.yml's diff job ran the pull request's own kb diff, so
    two changed lines in review/diff.py made the comment say "0 runs added". check.yml now only
    checks; it makes no comment and uploads nothing."""
    check = load("check.yml")
    assert "pull_request_target" not in check["on"] and "workflow_run" not in check["on"]
    assert list(check["jobs"]) == ["check"]
    assert not writes(check["jobs"]["check"])
    text = (WORKFLOWS / "check.yml").read_text(encoding="utf-8")
    assert "kb diff" not in text and "upload-artifact" not in text


def test_the_review_runs_the_bases_code_over_the_pull_request_as_data() -> None:
    """pull_request_target into main only; the review job may only read, checks out the base's
    own commit, fetches the head as objects (never a checkout), and runs the base's kb review
    bounded in time and memory."""
    review = load("review.yml")
    assert review["on"] == {
        "pull_request_target": {
            "branches": ["main"],
            "types": ["opened", "synchronize", "reopened"],
        }
    }
    job = review["jobs"]["review"]
    assert "permissions" not in job  # the workflow's: contents: read
    (checkout,) = checkouts(job)
    assert checkout["with"]["ref"] == "${{ github.sha }}"  # the base branch's last commit
    assert checkout["with"]["persist-credentials"] is False
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    assert 'git fetch --no-tags --no-recurse-submodules origin "$HEAD_SHA"' in runs
    assert not re.search(r"git (checkout|switch|worktree|reset|merge|pull)\b", runs)
    assert not re.search(r"git archive[^\n]*\|[^\n]*(sh|bash|python)", runs)
    step = next(s for s in job["steps"] if s.get("id") == "review")
    assert re.search(
        r"timeout [^\n]*\d+ prlimit --as=\d+ -- \\\n\s*\.venv/bin/kb review \"\$GITHUB_SHA\" "
        r"\"\$HEAD_SHA\" --markdown",
        step["run"],
    ), step["run"]
    assert step["env"]["HEAD_SHA"] == "${{ github.event.pull_request.head.sha }}"


def test_only_the_poster_may_write_and_it_runs_nothing_of_the_pull_request() -> None:
    """Regression (#33, attack 5): the artifact's pull-request number could be forged and
    `--edit-last` rewrote the bot's last comment anywhere. The poster takes no number from the
    artifact: target.py picks the one open pull request whose head is the reviewed commit and
    repository; the bot edits only its own comment, found by the marker."""
    review = load("review.yml")
    writers = [name for name, job in review["jobs"].items() if writes(job)]
    assert writers == ["post"]
    post = review["jobs"]["post"]
    assert post["permissions"] == {"contents": "read", "pull-requests": "write"}
    assert post["needs"] == "review"
    (checkout,) = checkouts(post)
    assert checkout["with"] == {
        "ref": "${{ github.sha }}",
        "persist-credentials": False,
        "sparse-checkout": "scripts/pgbench_kb/review/target.py",
        "sparse-checkout-cone-mode": False,
    }
    (run,) = [s for s in post["steps"] if "run" in s]
    assert not RUNS_CODE.search(run["run"]), "the poster runs nothing but target.py and gh"
    assert "--edit-last" not in run["run"] and "gh pr comment" not in run["run"]
    assert (
        'python3 -I "$target" pull-request --head-sha "$HEAD_SHA" --head-repo "$HEAD_REPO"'
        in (run["run"])
    )
    assert "comment --author 'github-actions[bot]' --marker \"$MARKER\"" in run["run"]
    assert run["env"]["HEAD_SHA"] == "${{ github.event.pull_request.head.sha }}"
    assert run["env"]["HEAD_REPO"] == "${{ github.event.pull_request.head.repo.full_name }}"
    from pgbench_kb.review.comment import MARK

    assert run["env"]["MARKER"] == MARK
    assert not re.search(r"number|NUMBER", "".join(map(str, run["env"].values())))
    for name, job in review["jobs"].items():
        for step in checkouts(job):
            assert not PR_REF.search(str(step.get("with"))), f"{name} checks out the PR"


def test_the_review_command_is_documented_for_the_workflow() -> None:
    """The workflow's commands exist: kb review takes BASE HEAD --markdown, target.py its two
    decisions (their own tests run them)."""
    help_text = subprocess.run(
        [str(REPO / ".venv" / "bin" / "kb"), "review", "--help"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert "--markdown" in help_text and "example:" in help_text


def test_the_deploy_builds_for_the_pages_address() -> None:
    workflow = load("deploy.yml")
    build = workflow["jobs"]["build"]
    site = next(s for s in build["steps"] if s.get("run") == "make site")
    assert site["env"]["KB_BASE_URL"] == "${{ steps.pages.outputs.base_url }}/"
    assert workflow["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert "pull_request" not in workflow["on"]


def test_installs_are_checked_against_hashes() -> None:
    lock = (REPO / "requirements.lock").read_text(encoding="utf-8")
    entries = re.findall(
        r"^([A-Za-z0-9_.-]+==\S+) \\\n    --hash=sha256:([0-9a-f]{64})$", lock, re.M
    )
    pins = re.findall(r"^[A-Za-z0-9_.-]+==", lock, re.M)
    assert len(entries) == len(pins) >= 30
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "--require-hashes" in makefile
    for name in ("check.yml", "deploy.yml", "review.yml"):
        runs = [s.get("run", "") for _, s in steps(load(name))]
        assert not any(re.search(r"pip install(?!.*--require-hashes)", r) for r in runs), name


def test_site_refuses_a_base_url_that_is_not_an_address(tmp_path: Path) -> None:
    result = subprocess.run(
        [str(REPO / "scripts" / "site.sh"), "--root", str(tmp_path), "--base-url", 'x" evil'],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1
    assert "is not an http(s) address ending in '/'" in result.stderr
