"""Findings and the report: what a problem is, where it is, and how it is printed."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

MAX_SHOWN_CHARS = 200


@dataclass(frozen=True)
class Finding:
    path: str
    line: int | None
    field: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        path = one_line(self.path, MAX_SHOWN_CHARS)
        where = path if self.line is None else f"{path}:{self.line}"
        label = "" if self.severity == "error" else f"{self.severity}: "
        field = one_line(self.field, MAX_SHOWN_CHARS)
        return f"{where}: {field}: {label}{one_line(self.message, 4 * MAX_SHOWN_CHARS)}"


def _escape(char: str) -> str:
    code = ord(char)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if char in named:
        return named[char]
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co"})


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` safe to print as part of one report line: control and formatting characters
    (newlines, escapes, bidi overrides) written as ``\\n``, ``\\x1b``…; cut with ``…`` after
    ``limit`` characters."""
    if not text.isprintable():
        text = "".join(_escape(c) if unicodedata.category(c) in _UNSAFE else c for c in text)
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


@dataclass(frozen=True)
class Issue:
    """A problem found in a run's data, before it is placed at a file's line."""

    field: str
    message: str
    severity: str = "error"
    #: Other fields the rule compared ``field`` with: any of them may be the one that is wrong
    #: (``kb import`` names the one a person gave).
    related: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSummary:
    """What the checks across files need to know about one valid run file."""

    path: str
    id: str
    raw_hashes: tuple[tuple[int, str], ...]
    config_key: str
    group: str | None
    tps: float | None
    lines: dict[str, int]
    #: Every file of ``raw`` (outputs and logs), as written in the run file.
    raw_paths: tuple[str, ...] = ()
    #: ``provenance.contributor``: a repeat group belongs to one contributor.
    contributor: str = ""
    #: What one measuring session shares (machine, harness or source, contribution date).
    session: tuple[str, ...] = ()
    #: ``repeat.index`` and ``repeat.of`` (0 without ``repeat``).
    repeat_index: int = 0
    repeat_of: int = 0
    #: ``machine_load.disturbed`` is true: the harness may have run the trial again.
    disturbed: bool = False
    #: ``repeat.design.rerun_of``: the disturbed run this one replaces.
    rerun_of: str | None = None


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    runs: int = 0
    notes: int = 0
    #: Hand-written pages other than hardware notes (guides, section pages, home, search).
    pages: int = 0
    #: Other documents with a schema: bench profiles, data/claims.yaml, data/answers.yaml.
    documents: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]

    @property
    def notes_found(self) -> list[Finding]:
        """Notes: what kb could not check (not problems; not counted)."""
        return [f for f in self.findings if f.severity == "note"]


def note_lines(notes: list[Finding]) -> list[str]:
    """Notes, one line per distinct message: located when one file has it, counted when many."""
    by_message: dict[str, list[Finding]] = {}
    for note in notes:
        by_message.setdefault(note.message, []).append(note)
    lines = []
    for message, found in by_message.items():
        if len(found) == 1:
            lines.append(str(found[0]))
        else:
            shown = one_line(found[0].path, MAX_SHOWN_CHARS)
            lines.append(
                f"note: {found[0].field}: {one_line(message, 4 * MAX_SHOWN_CHARS)}: "
                f"{len(found)} files (first: {shown})"
            )
    return lines


def format_report(report: Report) -> str:
    lines = [str(f) for f in report.findings if f.severity != "note"]
    lines += note_lines(report.notes_found)
    counted = [f"{report.runs} run file(s)", f"{report.notes} hardware note(s)"]
    if report.pages:
        counted.append(f"{report.pages} other page(s)")
    if report.documents:
        counted.append(f"{report.documents} other file(s) (profiles, claims, answers)")
    lines.append(
        f"checked {', '.join(counted[:-1])} and {counted[-1]}: "
        f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
    )
    return "\n".join(lines) + "\n"
