#!/usr/bin/env python3
"""Where the review is posted: the poster's two decisions, from what GitHub's API says.

Run by the posting job of .github/workflows/review.yml as a plain script (standard library
only: that job installs nothing and checks out nothing of the pull request's), and by the tests.

``pull-request``: the one open pull request whose head commit and head repository are those the
review was computed for, from ``gh pr list --state open --json
number,headRefOid,headRepository,headRepositoryOwner``. The number never comes from an artifact
or from anything the pull request wrote. None, or several: nothing is posted.

``comment``: the bot's own earlier review comment on it, from ``gh api --paginate
repos/OWNER/REPO/issues/N/comments``: a comment by the bot's login whose body starts with the
review's marker line. A comment by anyone else carrying the marker is not the bot's.

Usage:   target.py pull-request --head-sha SHA --head-repo OWNER/NAME PRS.json
         target.py comment --author LOGIN --marker LINE COMMENTS.json
stdout:  the pull request's number / the comment's id (nothing when there is no earlier one)
stderr:  why nothing was found, in one line
Exit:    0 found (for ``comment``: found or none); 3 no single pull request matches; 2 input
         that is not what gh prints.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARK = "<!-- pgbench-kb-review -->"
BOT = "github-actions[bot]"
SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
NO_MATCH = 3


class InputError(Exception):
    """What was read is not what ``gh`` prints."""


@dataclass(frozen=True)
class Found:
    """The pull request's number, or None and why."""

    number: int | None
    why: str


def read_json_values(text: str) -> list[Any]:
    """The JSON values of ``text`` one after another (``gh api --paginate`` prints one array
    per page, back to back), each array's items flattened into one list."""
    decoder, items, at = json.JSONDecoder(), [], 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            return items
        try:
            value, at = decoder.raw_decode(text, at)
        except ValueError as exc:
            raise InputError(f"not JSON at character {at}: {exc}") from None
        items.extend(value if isinstance(value, list) else [value])


def head_repository(pr: dict[str, Any]) -> str | None:
    """``owner/name`` of a pull request's head repository (None when it was deleted)."""
    repo, owner = pr.get("headRepository"), pr.get("headRepositoryOwner")
    if isinstance(repo, dict) and isinstance(repo.get("nameWithOwner"), str):
        return repo["nameWithOwner"]
    if isinstance(repo, dict) and isinstance(owner, dict):
        name, login = repo.get("name"), owner.get("login")
        if isinstance(name, str) and isinstance(login, str):
            return f"{login}/{name}"
    return None


def find_pull_request(prs: Sequence[Any], head_sha: str, head_repo: str) -> Found:
    """The one open pull request whose head is ``head_sha`` in ``head_repo``."""
    if not SHA.match(head_sha):
        return Found(None, f"the head commit {head_sha!r} is not a commit id")
    if not REPO.match(head_repo):
        return Found(None, f"the head repository {head_repo!r} is not OWNER/NAME")
    matches = sorted(
        pr["number"]
        for pr in prs
        if isinstance(pr, dict)
        and isinstance(pr.get("number"), int)
        and not isinstance(pr.get("number"), bool)
        and pr.get("headRefOid") == head_sha
        and (head_repository(pr) or "").lower() == head_repo.lower()
    )
    if not matches:
        return Found(
            None,
            f"no open pull request has head {head_sha[:12]} in {head_repo} "
            "(closed, or pushed again since: the newer run posts)",
        )
    if len(matches) > 1:
        listed = ", ".join(f"#{n}" for n in matches)
        return Found(None, f"{len(matches)} open pull requests ({listed}) have that head")
    return Found(matches[0], f"pull request #{matches[0]}")


def find_comment(comments: Sequence[Any], author: str, marker: str = MARK) -> int | None:
    """The id of the earliest comment by ``author`` whose body starts with ``marker``."""
    ids = [
        c["id"]
        for c in comments
        if isinstance(c, dict)
        and isinstance(c.get("id"), int)
        and isinstance(c.get("user"), dict)
        and c["user"].get("login") == author
        and isinstance(c.get("body"), str)
        and c["body"].split("\n", 1)[0].strip() == marker
    ]
    return min(ids) if ids else None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="target.py",
        description="Where the review is posted (see the header of this file).",
        epilog="example:\n  gh pr list --state open --json "
        "number,headRefOid,headRepository,headRepositoryOwner > prs.json\n"
        "  target.py pull-request --head-sha 0123…(40 hex) --head-repo someone/pgbench-kb "
        "prs.json\n  target.py comment --author 'github-actions[bot]' comments.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="what", required=True, metavar="WHAT")
    pr = sub.add_parser(
        "pull-request",
        help="the one open pull request with this head commit and repository",
        epilog="example:\n  target.py pull-request --head-sha 0123…(40 hex) "
        "--head-repo someone/pgbench-kb prs.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pr.add_argument("--head-sha", required=True, help="the head commit the review is of")
    pr.add_argument("--head-repo", required=True, help="its repository, OWNER/NAME")
    pr.add_argument("prs", type=Path, help="what gh pr list --json … printed ('-': stdin)")
    comment = sub.add_parser(
        "comment",
        help="the bot's own earlier review comment (its marker first), if any",
        epilog="example:\n  target.py comment --author 'github-actions[bot]' comments.json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    comment.add_argument("--author", default=BOT, help=f"the bot's login (default: {BOT})")
    comment.add_argument("--marker", default=MARK, help=f"the first line (default: {MARK})")
    comment.add_argument("comments", type=Path, help="what gh api --paginate … printed")
    return parser


def _read(path: Path) -> list[Any]:
    text = sys.stdin.read() if str(path) == "-" else path.read_text(encoding="utf-8")
    return read_json_values(text)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        items = _read(args.prs if args.what == "pull-request" else args.comments)
    except (InputError, OSError, UnicodeDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.what == "pull-request":
        found = find_pull_request(items, args.head_sha, args.head_repo)
        if found.number is None:
            print(f"nothing posted: {found.why}", file=sys.stderr)
            return NO_MATCH
        print(found.number)
        return 0
    comment = find_comment(items, args.author, args.marker)
    if comment is not None:
        print(comment)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
