"""Hand-written pages: ``kb derive`` refuses to build while ``content/`` holds anything ``kb
check`` refuses there — a file where the converter writes pages (a shadow of a run, group or
list page), a link, a page in no hand-written place, front-matter keys that would take over
another address, YAML aliases, raw HTML, shortcodes, outside images, Markdown attributes — so a
build whose check was skipped cannot publish it either. The rules themselves are
``pgbench_kb.runs.check.content`` and ``markdown``; the first problem is raised, located."""

from __future__ import annotations

from pathlib import Path

from pgbench_kb.errors import DeriveError, KbError
from pgbench_kb.runs.check.content import (
    MAX_PAGE_BYTES,
    PAGE_SIZE_HINT,
    TAKEOVER_KEYS,
    body_findings,
    check_page,
    contributed,
    read_front_matter,
)
from pgbench_kb.runs.check.markdown import RAW_HTML_HINT, RAW_HTML_MESSAGE, raw_html_lines
from pgbench_kb.runs.check.report import Finding
from pgbench_kb.runs.files import DOT_NAME_FIELD
from pgbench_kb.runs.runfile import read_text_file

HINT = "run `kb check`: it lists every problem of the hand-written pages"


def raw_html_problems(text: str, path: str) -> list[DeriveError]:
    """Every raw HTML tag in the Markdown body of ``text``, as located errors."""
    return [
        DeriveError(
            RAW_HTML_MESSAGE.format(tag=tag[:40]),
            path=path,
            line=line,
            field="(body)",
            hint=RAW_HTML_HINT,
        )
        for line, tag in raw_html_lines(text)
    ]


def _note_problems(path: Path) -> list[Finding]:
    """What a hardware note must not hold to be laid out (its schema is kb check's)."""
    shown = str(path)
    try:
        text = read_text_file(path, max_bytes=MAX_PAGE_BYTES, hint=PAGE_SIZE_HINT)
        front = read_front_matter(text, shown)
    except KbError as exc:
        return [Finding(shown, exc.line, exc.field or "(front matter)", exc.message)]
    problems = [
        Finding(shown, None, key, "changes where a page is published or what other pages do")
        for key in front
        if key in TAKEOVER_KEYS
    ]
    return problems + body_findings(text, shown)


def page_problems(root: Path) -> list[Finding]:
    """Every error of the hand-written pages under ``root/content`` that stops a build."""
    found = contributed(root, ("content", "data"))
    # Under data/ the build refuses what it would read through: links and special files, and
    # dot names (no stage reads them, and none may wait there unchecked: runs/files.py); the
    # places of data files are kb check's business.
    problems = [
        f
        for f in found.findings
        if Path(f.path).is_relative_to(root / "content")
        or f.field == DOT_NAME_FIELD
        or f.message.startswith(("a symbolic link", "not a regular file"))
    ]
    for kind, path in found.pages:
        problems += _note_problems(path) if kind == "hardware" else check_page(path, kind)
    return [p for p in problems if p.severity == "error"]


def check_pages(root: Path) -> None:
    """Raise the first problem of any hand-written page under ``root/content``."""
    problems = page_problems(root)
    if problems:
        first = problems[0]
        shown = Path(first.path)
        path = shown.relative_to(root).as_posix() if shown.is_relative_to(root) else first.path
        raise DeriveError(first.message, path=path, line=first.line, field=first.field, hint=HINT)
