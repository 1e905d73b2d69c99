"""``kb check``: validate run files and hardware notes, collecting every problem before
reporting. Each problem is printed as ``path:line: field: message`` and the report ends with
counts; errors make the command exit 1, warnings alone do not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import frontmatter

from pgbench_kb.errors import KbError
from pgbench_kb.runfile import HARDWARE_DIR, RUNS_DIR, Loaded, load_yaml_file
from pgbench_kb.schema import validate


@dataclass(frozen=True)
class Finding:
    path: str
    line: int | None
    field: str
    message: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        label = "" if self.severity == "error" else "warning: "
        return f"{where}: {self.field}: {label}{self.message}"


@dataclass
class Report:
    findings: list[Finding] = field(default_factory=list)
    runs: int = 0
    notes: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "warning"]


def format_report(report: Report) -> str:
    lines = [str(f) for f in report.findings]
    lines.append(
        f"checked {report.runs} run file(s) and {report.notes} hardware note(s): "
        f"{len(report.errors)} error(s), {len(report.warnings)} warning(s)"
    )
    return "\n".join(lines) + "\n"


def _collect(paths: Sequence[str], root: Path) -> tuple[list[Path], list[Path]]:
    targets = [Path(p) for p in paths] or [root / RUNS_DIR, root / HARDWARE_DIR]
    runs: list[Path] = []
    notes: list[Path] = []
    for target in targets:
        files: Iterable[Path] = sorted(target.rglob("*")) if target.is_dir() else [target]
        for path in files:
            if path.suffix in {".yaml", ".yml"}:
                runs.append(path)
            elif path.suffix == ".md" and path.name != "_index.md":
                notes.append(path)
    return runs, notes


def check_run(path: Path, root: Path) -> list[Finding]:
    shown = str(path)
    try:
        loaded: Loaded = load_yaml_file(path)
    except KbError as exc:
        return [Finding(shown, exc.line, exc.field or "(file)", exc.message)]
    findings = [
        Finding(shown, loaded.line_of(p.field), p.field, p.message, p.severity)
        for p in validate("run", loaded.data)
    ]
    data = loaded.data if isinstance(loaded.data, dict) else {}
    machine = data.get("machine")
    if isinstance(machine, str) and not (root / HARDWARE_DIR / f"{machine}.md").is_file():
        findings.append(
            Finding(
                shown,
                loaded.line_of("machine"),
                "machine",
                f"no hardware note content/hardware/{machine}.md (write one, or fix the slug)",
            )
        )
    return findings


def check_note(path: Path) -> list[Finding]:
    try:
        post = frontmatter.load(path)
    except Exception as exc:  # python-frontmatter raises yaml and decode errors as they come
        return [Finding(str(path), None, "(front matter)", f"cannot read: {exc}")]
    if not post.metadata.get("title"):
        return [Finding(str(path), 1, "title", "missing (every hardware note needs a title)")]
    return []


def check_paths(paths: Sequence[str], *, root: Path) -> Report:
    runs, notes = _collect(paths, root)
    report = Report(runs=len(runs), notes=len(notes))
    for path in runs:
        report.findings.extend(check_run(path, root))
    for path in notes:
        report.findings.extend(check_note(path))
    return report
