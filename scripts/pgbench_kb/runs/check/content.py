"""Every contributed file under ``content/`` and ``data/``: where it may be, what kind of file it
is, and what a hand-written page's front matter and body may hold.

A pull request is untrusted input, and Hugo lays out whatever is under ``content/`` (mounted
above the pages ``kb derive`` writes). So:

- every entry under ``content/`` and ``data/`` is a regular file or a folder: no symbolic link
  (it would be followed by readers, out of the repository), no device or pipe; and no name
  starts with a dot (``runs/files.py``: the one list of files every stage reads);
- ``content/`` holds hand-written pages in their places only (``PAGE_PLACES``); a file where
  ``kb derive`` writes pages (``GENERATED_SECTIONS``) would replace them and is refused, as is
  a page named as Hugo names bundles or list pages (``RESERVED_NAMES``);
- ``data/`` holds run files (``data/runs/``), their raw files (``data/raw/``), the mapping
  files of imported result trees (``data/imports/SET/mapping.yaml``, and ``LICENSE`` beside
  it when the set's licence asks copies to keep its notice), ``data/claims.yaml``,
  ``data/answers.yaml`` (the answer pages' words, checked by ``kb derive``:
  derive/answer_pages.py) and ``data/maintainers-runs.sha256`` (the project's
  own runs, which alone may sign as its maintainers: check/text.py);
- each kind of page has an allow-list of front-matter keys (``PAGE_KEYS``): ``url``,
  ``aliases``, ``cascade``, ``build``… would take over other addresses. Front matter is read
  by ``runs.runfile.load_yaml_text``: no aliases, no duplicate keys, bounded depth and size;
- the body follows ``markdown.py`` (no raw HTML, shortcodes, outside images, attributes).

``kb check`` reports each problem as ``path:line: field: message``; ``kb derive`` applies the
same rules to ``content/`` and refuses to build (``derive/handwritten.py``), so a build whose check
was skipped still cannot publish a shadow.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from pgbench_kb.errors import KbError
from pgbench_kb.runs.check.markdown import (
    RAW_HTML_HINT,
    RAW_HTML_MESSAGE,
    body_problems,
    raw_html_lines,
)
from pgbench_kb.runs.check.report import Finding, one_line
from pgbench_kb.runs.files import (
    DOT_NAME_FIELD,
    dot_name_message,
    hidden_part,
    is_hidden,
    is_import_temp,
)
from pgbench_kb.runs.runfile import load_yaml_text, read_text_file

#: Sections whose pages ``kb derive`` writes (``build/site/content/<section>/``).
GENERATED_SECTIONS = (
    "runs",
    "groups",
    "comparisons",
    "results",
    "answers",
    "downloads",
    "changes",
    "sources",
    "matrix",
)
#: Names Hugo gives a meaning: ``index`` (a leaf bundle: its folder's only page), ``_index``
#: (a section's own page) and ``page`` (``/runs/page/2/``: the pages of a list).
RESERVED_NAMES = frozenset({"index", "_index", "page"})
#: Front-matter keys each kind of hand-written page may have (hardware notes: their schema).
PAGE_KEYS: dict[str, frozenset[str]] = {
    "home": frozenset({"title", "description"}),
    "search": frozenset({"title", "description", "layout"}),
    "section": frozenset({"title", "description", "weight"}),
    "guide": frozenset({"title", "description", "weight", "draft"}),
}
#: Keys that change where a page is published or what other pages do: said as such.
TAKEOVER_KEYS = frozenset(
    {"url", "aliases", "cascade", "build", "_build", "outputs", "slug", "type", "layout"}
)
#: Where hand-written pages live, for messages.
PAGE_PLACES = (
    "content/_index.md (home), content/search.md, content/guides/SLUG.md, "
    "content/hardware/SLUG.md and the _index.md of those two folders"
)
#: Hand-written sections (``content/<section>/``) and the kind of their pages.
SECTIONS = {"guides": "guide", "hardware": "hardware"}
DATA_PLACES = (
    "data/runs/ (run files), data/raw/ (their raw files), data/imports/SET/mapping.yaml (how a "
    "result tree was imported) with its LICENSE when the set's licence asks copies to keep its "
    "notice, data/claims.yaml, data/answers.yaml and "
    "data/maintainers-runs.sha256"
)
#: Single files of data/ besides the run and raw files (the last: the project's own runs,
#: check/text.py).
DATA_FILES = (
    PurePosixPath("data/claims.yaml"),
    PurePosixPath("data/answers.yaml"),
    PurePosixPath("data/maintainers-runs.sha256"),
)
RUN_SUFFIXES = (".yaml", ".yml")
GUIDE_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MAX_PAGE_BYTES = 1 * 2**20
PAGE_SIZE_HINT = "a page is prose; link to long material instead"


@dataclass(frozen=True)
class Contributed:
    """What the walk found: problems, and the pages to check by kind (``kind``, path)."""

    findings: list[Finding]
    pages: list[tuple[str, Path]]


def _error(path: Path, message: str, field: str = "(file)", line: int | None = 1) -> Finding:
    return Finding(str(path), line, field, message)


def _dot_name(path: Path, is_dir: bool) -> Finding:
    return Finding(str(path), None, DOT_NAME_FIELD, dot_name_message(path.name, folder=is_dir))


def link_problem(path: Path) -> str:
    try:
        target = one_line(os.readlink(path), 120)
    except OSError:
        target = "?"
    return f"a symbolic link (to {target}): commit the file itself (links are not followed)"


def page_kind(relative: PurePosixPath) -> str | None:
    """The kind of hand-written page at ``relative`` (from the project root), or None when no
    hand-written page may be there."""
    parts = relative.parts
    if len(parts) == 2 and parts[1] == "_index.md":
        return "home"
    if len(parts) == 2 and parts[1] == "search.md":
        return "search"
    if len(parts) == 3 and parts[1] in SECTIONS and relative.suffix == ".md":
        if parts[2] == "_index.md":
            return "section"
        return SECTIONS[parts[1]]
    return None


def misplaced(relative: PurePosixPath) -> str:
    """Why no hand-written page may be at ``relative``."""
    parts = relative.parts
    section = parts[1] if len(parts) > 2 else relative.stem if len(parts) == 2 else ""
    if section.lower() in GENERATED_SECTIONS:
        return (
            f"kb derive writes the pages under /{section.lower()}/: a hand-written file here "
            f"would replace them (hand-written pages are {PAGE_PLACES})"
        )
    if relative.stem.lower() in RESERVED_NAMES:
        return (
            f"{relative.name!r} is a name Hugo gives a meaning (a bundle or a list page): it "
            f"would hide the pages beside it (hand-written pages are {PAGE_PLACES})"
        )
    return f"not a place for a hand-written page (they are {PAGE_PLACES})"


def walk(root: Path, top: str) -> list[tuple[Path, os.stat_result | None, bool]]:
    """Every entry under ``ROOT/top`` (not following links): (path, lstat, is a folder)."""
    found: list[tuple[Path, os.stat_result | None, bool]] = []
    start = root / top
    stack = [start]
    while stack:
        folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                info = None
            is_dir = info is not None and stat.S_ISDIR(info.st_mode)
            found.append((path, info, is_dir))
            if is_dir:
                stack.append(path)
    found.sort(key=lambda item: str(item[0]))
    return found


def contributed(root: Path, tops: tuple[str, ...] = ("content", "data")) -> Contributed:
    """Walk ``content/`` and ``data/`` under ROOT: a finding for each entry that is a link, is
    no regular file or folder, or is where no contributed file may be; and the hand-written
    pages found, with their kind."""
    findings: list[Finding] = []
    pages: list[tuple[str, Path]] = []
    for top in tops:
        base = root / top
        if os.path.islink(base):
            findings.append(_error(base, link_problem(base)))
            continue
        for path, info, is_dir in walk(root, top):
            relative = PurePosixPath(path.relative_to(root).as_posix())
            if hidden_part(relative.parent) is not None:
                continue  # inside a dot-named folder: the folder is the finding
            if is_hidden(path.name):
                if is_dir or not is_import_temp(path.name):
                    findings.append(_dot_name(path, is_dir))
                continue  # kb import's temporary file: a stray file (collect.stray_files)
            if info is None:
                findings.append(_error(path, "cannot be looked up"))
                continue
            if stat.S_ISLNK(info.st_mode):
                findings.append(_error(path, link_problem(path)))
                continue
            if is_dir:
                continue
            if not stat.S_ISREG(info.st_mode):
                findings.append(_error(path, "not a regular file (a device, a pipe or a socket)"))
                continue
            if top == "content":
                if relative.suffix != ".md":
                    findings.append(
                        _error(path, "only Markdown pages (.md) are contributed under content/")
                    )
                    continue
                kind = page_kind(relative)
                if kind is None or (
                    kind in ("guide", "hardware") and relative.stem.lower() in RESERVED_NAMES
                ):
                    findings.append(_error(path, misplaced(relative)))
                    continue
                if kind == "guide" and not GUIDE_SLUG.match(relative.stem):
                    findings.append(
                        _error(
                            path,
                            f"{relative.name!r}: a guide's file name is its address "
                            "(lower-case letters, digits and '-'; Hugo lowercases addresses, "
                            "so two names differing in case would be one page)",
                        )
                    )
                    continue
                pages.append((kind, path))
            else:
                findings += _data_problem(path, relative)
    return Contributed(findings, pages)


def _data_problem(path: Path, relative: PurePosixPath) -> list[Finding]:
    parts = relative.parts
    if relative in DATA_FILES:
        return []
    if len(parts) > 2 and parts[1] == "raw":
        return []
    if len(parts) == 4 and parts[1] == "imports" and parts[3] == "mapping.yaml":
        return []  # checked against its schema by kb check (runs/import_tree.py)
    if len(parts) == 4 and parts[1] == "imports" and parts[3] == "LICENSE":
        return []  # the notice a set's licence asks its copies to keep (the MIT licence's)
    if len(parts) > 2 and parts[1] == "runs":
        if path.suffix in RUN_SUFFIXES:
            return []
        return [_error(path, "data/runs/ holds run files (.yaml) only")]
    return [_error(path, f"not a place for a contributed file (data/ holds {DATA_PLACES})")]


def split_page(text: str) -> tuple[str, str, int] | None:
    """(front matter, body, line of the body) of a page that starts with a ``---`` line."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    return None


def read_front_matter(text: str, shown: str) -> dict[str, Any]:
    """The front matter of a page's text as a mapping, read with ``load_yaml_text`` (no YAML
    aliases: a few lines of them expand to gigabytes); ``KbError`` with the page's line."""
    parts = split_page(text)
    if parts is None:
        raise KbError(
            "no front matter (start the page with a '---' line, its fields, and another "
            "'---' line)",
            path=shown,
            line=1,
            field="(front matter)",
        )
    try:
        loaded = load_yaml_text(parts[0], path=shown)
    except KbError as exc:
        exc.line = exc.line + 1 if exc.line is not None else None
        exc.message = exc.message.replace(" in run files", " in front matter")
        exc.field = exc.field or "(front matter)"
        raise
    data = loaded.data if loaded.data is not None else {}
    if not isinstance(data, dict):
        raise KbError(
            "the front matter is not a mapping of fields",
            path=shown,
            line=2,
            field="(front matter)",
        )
    return data


def check_page(path: Path, kind: str) -> list[Finding]:
    """Every problem of one hand-written page that is not a hardware note (``notes.py``)."""
    shown = str(path)
    if os.path.islink(path):
        return [_error(path, link_problem(path))]
    try:
        text = read_text_file(path, max_bytes=MAX_PAGE_BYTES, hint=PAGE_SIZE_HINT)
    except KbError as exc:
        return [Finding(shown, exc.line, exc.field or "(file)", _with_hint(exc))]
    parts = split_page(text)
    if parts is None:
        message = (
            "no front matter (start the page with a '---' line, its fields, and another '---' line)"
        )
        return [_error(path, message, "(front matter)")]
    try:
        loaded = load_yaml_text(parts[0], path=shown)
    except KbError as exc:
        line = exc.line + 1 if exc.line is not None else None
        exc.message = exc.message.replace(" in run files", " in front matter")
        return [Finding(shown, line, exc.field or "(front matter)", _with_hint(exc))]
    front = loaded.data if loaded.data is not None else {}
    if not isinstance(front, dict):
        return [_error(path, "the front matter is not a mapping of fields", "(front matter)", 2)]
    findings = [
        Finding(shown, (loaded.lines.get(key) or 0) + 1, key, message)
        for key, message in front_problems(front, kind)
    ]
    findings += body_findings(text, shown, parts[2])
    return findings


def front_problems(front: dict[str, Any], kind: str) -> list[tuple[str, str]]:
    """(key, message) for each front-matter key a page of ``kind`` may not have or has wrong."""
    allowed = PAGE_KEYS[kind]
    problems = []
    for key, value in front.items():
        if key not in allowed:
            if key in TAKEOVER_KEYS:
                why = "changes where a page is published or what other pages do"
            else:
                why = "is not a key of this kind of page"
            problems.append(
                (
                    key,
                    f"{why}; a {kind} page may have {', '.join(sorted(allowed))}",
                )
            )
        elif key in ("title", "description") and not isinstance(value, str):
            problems.append((key, "expected text"))
        elif key == "weight" and (isinstance(value, bool) or not isinstance(value, int)):
            problems.append((key, "expected a whole number (the page's place in its list)"))
        elif key == "draft" and not isinstance(value, bool):
            problems.append((key, "expected true or false"))
        elif key == "layout" and value != "search":
            problems.append((key, "the search page's layout is 'search'"))
    if kind == "guide" and not isinstance(front.get("title"), str):
        problems.append(("title", "a guide needs a title"))
    return problems


def _with_hint(exc: KbError) -> str:
    return exc.message if not exc.hint else f"{exc.message} ({exc.hint})"


def body_findings(text: str, shown: str, body_line: int | None = None) -> list[Finding]:
    """The body rules of ``markdown.py`` (raw HTML included), as findings of ``shown``."""
    findings = [
        Finding(shown, line, "(body)", f"{RAW_HTML_MESSAGE.format(tag=tag[:40])} ({RAW_HTML_HINT})")
        for line, tag in raw_html_lines(text)
    ]
    findings += [Finding(shown, line, "(body)", message) for line, message in body_problems(text)]
    findings.sort(key=lambda f: f.line or 0)
    return findings
