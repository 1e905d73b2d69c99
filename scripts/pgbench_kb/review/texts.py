"""The words a pull request changes, before and after: each answer (its lead first), each claim,
each guide and other hand-written page (not hardware notes: those are results).

These are what a reader takes as the site's own voice, so a reviewer sees them whole rather than
as "changed". Each is given as plain text (the report puts it in a code block: nothing in it
renders as Markdown or HTML); a file that cannot be read is said so, not shown.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import KbError
from pgbench_kb.review.paths import shown
from pgbench_kb.runs.runfile import load_yaml_text, read_text_file

ANSWERS = "data/answers.yaml"
CLAIMS = "data/claims.yaml"
#: The most lines of one page's diff shown; the rest are counted.
MAX_DIFF_LINES = 80
#: A page larger than this is not read for the review (kb check limits pages to 1 MiB).
MAX_PAGE_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Changed:
    """One changed text: what it is (``answer raid-level: lead``), and its text before and
    after (None: absent on that side)."""

    what: str
    before: str | None
    after: str | None


def _entries(root: Path, relative: str, key: str, id_key: str) -> dict[str, dict[str, Any]]:
    path = root / relative
    if not path.is_file():
        return {}
    try:
        data = load_yaml_text(read_text_file(path, follow_links=False), path=relative).data
    except KbError as exc:
        return {"(unreadable)": {"error": str(exc)}}
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}
    return {
        str(item.get(id_key)): item
        for item in items
        if isinstance(item, dict) and item.get(id_key) is not None
    }


def _as_text(value: Any) -> str:
    """A field's value as one plain text: words with their line breaks folded as YAML's ``>-``
    folds them; anything else as compact JSON."""
    if isinstance(value, str):
        return " ".join(value.split())
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _entry_changes(
    kind: str, old: dict[str, Any], new: dict[str, Any], first: str
) -> list[Changed]:
    out = []
    for ident in sorted(set(old) | set(new)):
        before, after = old.get(ident), new.get(ident)
        if before == after:
            continue
        fields = sorted(set(before or {}) | set(after or {}), key=lambda f: (f != first, f))
        for name in fields:
            b = None if before is None or name not in before else _as_text(before[name])
            a = None if after is None or name not in after else _as_text(after[name])
            if a != b:
                out.append(Changed(f"{kind} {ident}: {name}", b, a))
    return out


def _page(root: Path, relative: str) -> str | None:
    path = root / relative
    if path.is_symlink() or not path.is_file():
        return None
    try:
        return read_text_file(path, max_bytes=MAX_PAGE_BYTES, follow_links=False)
    except KbError as exc:
        return f"(cannot be read: {exc})"


def page_diff(before: str | None, after: str | None) -> str:
    """A unified diff of a page's text, cut at ``MAX_DIFF_LINES`` lines."""
    lines = list(
        difflib.unified_diff(
            (before or "").splitlines(),
            (after or "").splitlines(),
            "before" if before is not None else "(none)",
            "after" if after is not None else "(none)",
            lineterm="",
            n=2,
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… and {len(lines) - MAX_DIFF_LINES} more lines"]
    return "\n".join(lines)


def changed_texts(base: Path, head: Path, changed: list[str]) -> list[Changed]:
    """Each changed answer field, claim field and hand-written page (not a hardware note)
    among ``changed`` paths, the two sides read from the folders ``base`` and ``head``."""
    out: list[Changed] = []
    if ANSWERS in changed:
        out += _entry_changes(
            "answer",
            _entries(base, ANSWERS, "answers", "slug"),
            _entries(head, ANSWERS, "answers", "slug"),
            "lead",
        )
    if CLAIMS in changed:
        out += _entry_changes(
            "claim",
            _entries(base, CLAIMS, "claims", "id"),
            _entries(head, CLAIMS, "claims", "id"),
            "claim",
        )
    for relative in changed:
        page = relative.startswith("content/") and relative.endswith(".md")
        if page and not relative.startswith("content/hardware/"):
            what = f"page {shown(relative)}"
            out.append(Changed(what, _page(base, relative), _page(head, relative)))
    return out
