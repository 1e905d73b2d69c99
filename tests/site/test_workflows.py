"""The GitHub workflows (issue #22, item 5): actionlint passes on them (and fails on a broken
one, so the test can fail), actions are pinned by commit, the checkout keeps no token, the
comment workflow never runs the pull request's code where it can write, the deploy builds for
the Pages address, and every install is checked against hashes."""

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
    assert [f.name for f in files] == ["check.yml", "comment.yml", "deploy.yml"]
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


@pytest.mark.parametrize("name", ["check.yml", "comment.yml", "deploy.yml"])
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


def test_the_comment_is_posted_without_running_the_pull_requests_code() -> None:
    """GitHub's pattern for untrusted code: check.yml's `diff` job runs on pull_request with a
    read-only token and uploads an artifact; comment.yml runs on workflow_run, may comment,
    and never checks out or runs code."""
    check, comment = load("check.yml"), load("comment.yml")
    assert "pull_request" in check["on"] and "pull_request_target" not in check["on"]
    diff = check["jobs"]["diff"]
    assert "permissions" not in diff  # the workflow's: contents: read
    assert diff["if"] == "github.event_name == 'pull_request'"
    assert any("kb diff" in s.get("run", "") and "--markdown" in s["run"] for s in diff["steps"])
    assert any(s.get("uses", "").startswith("actions/upload-artifact@") for s in diff["steps"])
    assert comment["on"] == {"workflow_run": {"workflows": ["check"], "types": ["completed"]}}
    post = comment["jobs"]["post"]
    assert list(comment["jobs"]) == ["post"]
    assert post["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert post["if"] == "github.event.workflow_run.event == 'pull_request'"
    for step in post["steps"]:
        uses = step.get("uses", "")
        assert not uses.startswith("actions/checkout@"), "the posting job checks nothing out"
        assert not re.search(r"\bmake\b|\.venv|python|\bsource\b|\bbash\b|\./", step.get("run", ""))
    download = next(s for s in post["steps"] if s.get("uses", "").startswith("actions/download"))
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    run = next(s["run"] for s in post["steps"] if "run" in s)
    assert "gh pr comment" in run and "--body-file kb-diff/comment.md" in run


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
    for name in ("check.yml", "comment.yml", "deploy.yml"):
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
