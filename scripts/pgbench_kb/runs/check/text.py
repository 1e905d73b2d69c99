"""Text in a run file: no control, bidi or zero-width characters in any field, and the
maintainers' name kept for the project's own runs.

Regression (#33, attack 10): a ``contributor`` with carriage returns injected a rule, an
@mention, a link and a right-to-left override into the pull-request comment, and any pull
request could sign its runs as "pgbench-kb maintainers".

- **Characters.** Every text value and every key of a run file (``kb check``, and ``kb import``
  before it writes, which applies the same rules) is refused, located, when it holds a C0 or C1
  control character (U+0000–U+001F, U+007F–U+009F), a line or paragraph separator
  (U+2028, U+2029), a bidi mark, embedding, override or isolate (U+061C, U+200E, U+200F,
  U+202A–U+202E, U+2066–U+2069) or a zero-width character (U+200B–U+200D, U+2060, U+FEFF).
  The one exception: prose and script fields (``MULTILINE_FIELDS``: notes, a custom script's
  text) may hold line breaks (``\\n``), and a script's text tabs too.
- **The maintainers' name** (``MAINTAINERS``, however written: case, spaces, dashes and other
  punctuation ignored) in ``provenance.contributor`` is refused unless the run file is one of
  the project's own: listed, with the sha256 of its bytes, in ``data/maintainers-runs.sha256``
  (``sha256sum`` format: ``HASH  data/runs/…/ID.yaml``). A pull request cannot make a run its
  own by editing the run file; editing the list is a change outside the results, which the
  review shows as needing a maintainer's review. Maintainers add a run they imported with
  ``sha256sum data/runs/YYYY/MM/ID.yaml >> data/maintainers-runs.sha256``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pgbench_kb.runs.check.report import Issue

#: How the project's own runs name their contributor.
MAINTAINERS = "pgbench-kb maintainers"
#: The project's own run files and their sha256, relative to the project root.
OWN_RUNS = Path("data") / "maintainers-runs.sha256"
#: Fields (dotted, list indexes as ``*``) that may hold line breaks, and those that may hold tabs.
MULTILINE_FIELDS = (
    re.compile(r"provenance\.notes"),
    re.compile(r"(?:server|client)\.tuning\.notes"),
    re.compile(r"benchmark\.workload\.scripts\.\d+\.text"),
)
TAB_FIELDS = (re.compile(r"benchmark\.workload\.scripts\.\d+\.text"),)
#: Characters refused in any text: controls, separators, bidi and zero-width.
_REFUSED = re.compile(
    "[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]"
)
_HASH_LINE = re.compile(r"([0-9a-f]{64}) [ *](\S.*)")


def _allowed(dotted: str) -> str:
    allowed = ""
    if any(p.fullmatch(dotted) for p in MULTILINE_FIELDS):
        allowed += "\n"
    if any(p.fullmatch(dotted) for p in TAB_FIELDS):
        allowed += "\t"
    return allowed


def _texts(node: Any, dotted: str) -> Iterator[tuple[str, str, bool]]:
    """(dotted field, text, is a key) of every key and text value under ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            where = f"{dotted}.{key}" if dotted else str(key)
            yield where, str(key), True
            yield from _texts(value, where)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _texts(value, f"{dotted}.{index}")
    elif isinstance(node, str):
        yield dotted, node, False


def char_name(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X}" + (f" {name}" if name else "")


def _may_hold_refused(run: dict[str, Any]) -> bool:
    """False when every key and text of ``run`` is printable (``str.isprintable``, in C: no
    control, format, separator or non-ASCII space character), so none holds a refused one;
    the walk that names the field runs only otherwise (a run file has some 350 of them, and
    ``kb check`` spends under a millisecond on each file)."""
    stack: list[Any] = [run]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            for key in node:
                if type(key) is not str or not key.isprintable():
                    return True
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is str and not node.isprintable():
            return True
    return False


def rules_text(run: dict[str, Any]) -> list[Issue]:
    """A located issue for each field whose text (or key) holds a refused character."""
    if not _may_hold_refused(run):
        return []
    issues = []
    for dotted, text, is_key in _texts(run, ""):
        allowed = "" if is_key else _allowed(dotted)
        bad = next((m[0] for m in _REFUSED.finditer(text) if m[0] not in allowed), None)
        if bad is None:
            continue
        what = "key" if is_key else "text"
        issues.append(
            Issue(
                dotted,
                f"{char_name(bad)} is not allowed in a run file's {what} (control, bidi and "
                "zero-width characters change how text is shown elsewhere; remove it"
                + ("; only notes and a script's text may hold line breaks)" if not is_key else ")"),
            )
        )
    return issues


def _letters(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", text).casefold() if c.isalnum())


def claims_maintainers(contributor: str) -> bool:
    """Whether ``contributor`` signs as the project's maintainers, however written."""
    return _letters(MAINTAINERS) in _letters(contributor)


def own_runs(root: Path) -> dict[str, str]:
    """Path (relative to ROOT) → sha256 of the project's own run files; empty without a list."""
    try:
        text = (root / OWN_RUNS).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    found = {}
    for line in text.splitlines():
        match = _HASH_LINE.fullmatch(line.strip())
        if match:
            found[match[2].strip()] = match[1]
    return found


def maintainers_issue(run: dict[str, Any], path: Path, root: Path) -> Issue | None:
    """The issue of a run file that signs as the maintainers without being one of theirs."""
    contributor = (run.get("provenance") or {}).get("contributor")
    if not isinstance(contributor, str) or not claims_maintainers(contributor):
        return None
    try:
        relative = path.resolve().relative_to(root.resolve()).as_posix()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except (OSError, ValueError):
        relative, digest = str(path), ""
    if own_runs(root).get(relative) == digest:
        return None
    return Issue(
        "provenance.contributor",
        f"{contributor!r}: the name {MAINTAINERS!r} is kept for the project's own runs "
        f"(listed with their sha256 in {OWN_RUNS.as_posix()}); sign the run with your own name",
    )
