"""Hardware notes (``content/hardware/*.md``): front matter against the schema, a body, a slug for
a name.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pgbench_kb.errors import KbError
from pgbench_kb.runs.check.content import RESERVED_NAMES, body_findings, link_problem
from pgbench_kb.runs.check.raw import with_hint
from pgbench_kb.runs.check.report import Finding
from pgbench_kb.runs.runfile import (
    Loaded,
    load_yaml_text,
    read_text_file,
)
from pgbench_kb.runs.schema import validate

MAX_NOTE_BYTES = 1 * 2**20
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
MAX_SLUG_CHARS = 64
NOTE_FIELDS_OFFSET = 1


def _split_note(text: str) -> tuple[str, str] | None:
    """(front matter, body) of a note that starts with a ``---`` line, or None."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :])
    return None


def check_note(path: Path) -> list[Finding]:
    """Every problem of one hardware note: front matter against the schema, body present."""
    shown = str(path)
    if os.path.islink(path):
        return [Finding(shown, 1, "(file)", link_problem(path))]
    try:
        text = read_text_file(
            path,
            max_bytes=MAX_NOTE_BYTES,
            hint="a hardware note is a page of facts and prose; link to long material instead",
        )
    except KbError as exc:
        return [Finding(shown, exc.line, exc.field or "(file)", with_hint(exc))]
    try:
        parts = _split_note(text)
        if parts is None:
            return [
                Finding(
                    shown,
                    1,
                    "(front matter)",
                    "no front matter (start the note with a '---' line, its fields, and "
                    "another '---' line)",
                )
            ]
        front_text, body = parts
        loaded = load_yaml_text(front_text, path=shown)
    except KbError as exc:
        line = exc.line + NOTE_FIELDS_OFFSET if exc.line is not None else None
        exc.message = exc.message.replace(" in run files", " in front matter")
        return [Finding(shown, line, exc.field or "(front matter)", with_hint(exc))]
    lines = {k: v + NOTE_FIELDS_OFFSET for k, v in loaded.lines.items()}
    placed = Loaded(loaded.data, lines)
    front = loaded.data if loaded.data is not None else {}
    if not isinstance(front, dict):
        return [Finding(shown, 2, "(front matter)", "the front matter is not a mapping of fields")]
    findings = [
        Finding(shown, placed.line_of(p.field), p.field, p.text(), p.severity)
        for p in validate("hardware", front)
    ]
    if not SLUG_RE.match(path.stem) or len(path.stem) > MAX_SLUG_CHARS:
        findings.append(
            Finding(
                shown,
                1,
                "(file)",
                f"{path.name!r}: a note's file name is its slug "
                f"(lower-case letters, digits and '-', at most {MAX_SLUG_CHARS} characters)",
            )
        )
    elif path.stem in RESERVED_NAMES:
        findings.append(
            Finding(
                shown,
                1,
                "(file)",
                f"{path.name!r}: Hugo gives this name a meaning (a bundle or a list page): it "
                "would hide the other notes; name the note after the machine",
            )
        )
    if "aliases" in front:
        findings.append(
            Finding(
                shown,
                placed.line_of("aliases"),
                "aliases",
                "a note may not publish itself at other addresses (they could be another "
                "machine's or a guide's): remove aliases",
            )
        )
    if not body.strip():
        body_line = text.count("\n", 0, text.find("---", 3) + 3) + 2
        findings.append(
            Finding(shown, body_line, "(body)", "empty; describe the machine in a few sentences")
        )
    findings += body_findings(text, shown)
    if front.get("draft_note"):
        findings.append(
            Finding(
                shown,
                placed.line_of("draft_note"),
                "draft_note",
                "the note is still the stub kb import wrote; complete it and remove draft_note",
                "warning",
            )
        )
    return findings
