"""One run file: every rule it can break on its own (``run_rules``, ``single_run_issues``), and
``check_run``, which loads it, validates it against the schema and places each problem at its
line.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pgbench_kb.errors import KbError
from pgbench_kb.runs.check.benchmark import rules_benchmark
from pgbench_kb.runs.check.checkpoint_order import rules_checkpoints
from pgbench_kb.runs.check.content import RESERVED_NAMES
from pgbench_kb.runs.check.hosts import rules_hosts
from pgbench_kb.runs.check.machine_load import rules_machine_load
from pgbench_kb.runs.check.plausible import rules_plausible
from pgbench_kb.runs.check.provenance import (
    rules_provenance,
    rules_required,
    rules_transcribed,
)
from pgbench_kb.runs.check.raw import raw_issues, rules_latency_unverified, with_hint
from pgbench_kb.runs.check.report import Finding, Issue, RunSummary, one_line
from pgbench_kb.runs.check.results import rules_results
from pgbench_kb.runs.check.settings import rules_settings
from pgbench_kb.runs.check.smoke_rules import rules_tryout
from pgbench_kb.runs.check.storage import rules_storage
from pgbench_kb.runs.check.text import maintainers_issue, rules_text
from pgbench_kb.runs.check.values import dotted_get
from pgbench_kb.runs.runfile import (
    HARDWARE_DIR,
    RUNS_DIR,
    Loaded,
    read_run,
)
from pgbench_kb.runs.schema import validate


def run_rules(run: dict[str, Any], *, today: str) -> list[Issue]:
    """Every rule that one schema-valid run can break on its own."""
    return [
        *rules_provenance(run, today=today),
        *rules_required(run),
        *rules_transcribed(run),
        *rules_hosts(run),
        *rules_storage(run),
        *rules_benchmark(run),
        *rules_results(run),
        *rules_plausible(run),
        *rules_machine_load(run),
        *rules_checkpoints(run),
        *rules_text(run),
        *rules_settings(run),
        *rules_tryout(run),
        *rules_latency_unverified(run),
    ]


def single_run_issues(
    run: dict[str, Any], root: Path, *, today: str, blobs: dict[str, bytes] | None = None
) -> list[Issue]:
    """Every rule one schema-valid run can break on its own, its raw files included: what
    ``kb check`` applies to each file, and ``kb import`` before it writes anything."""
    return [*run_rules(run, today=today), *raw_issues(run, root, blobs)]


def config_key(run: dict[str, Any]) -> str:
    """Same machine, configuration and time ⇒ same key (results and provenance left out)."""
    source = run["provenance"].get("source") or {}
    picked = {
        "machine": run["machine"],
        "recorded_at": run["provenance"]["recorded_at"],
        "source": [source.get("title"), source.get("locator")],
        **{k: run.get(k) for k in ("server", "client", "storage", "postgres", "benchmark")},
        "repeat": run.get("repeat"),
    }
    text = json.dumps(picked, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: The fields whose lines the rules across files point at.
SUMMARY_LINES = (
    "id",
    "machine",
    "repeat.group",
    "repeat.index",
    "repeat.of",
    "results.tps",
    "provenance.contributor",
    "repeat.design.rerun_of",
)


def session_key(run: dict[str, Any]) -> tuple[str, ...]:
    """What the repeats of one measuring session share: the machine, the harness that
    measured them (name, profile, target) or the source they were transcribed from (title,
    locator), and the day they were contributed."""
    provenance = run["provenance"]
    harness = provenance.get("harness") or {}
    source = provenance.get("source") or {}
    return tuple(
        str(v)
        for v in (
            run["machine"],
            harness.get("name"),
            harness.get("profile"),
            harness.get("target"),
            source.get("title"),
            # Transcribed figures: where in the source; a published tree's outputs each have
            # their own path, and their session is in repeat.group (runs/import_tree.py).
            source.get("locator") if run.get("origin") == "transcribed" else None,
            provenance.get("contributed_at"),
        )
    )


def place(path: str, loaded: Loaded, issues: Iterable[Issue]) -> list[Finding]:
    return [Finding(path, loaded.line_of(i.field), i.field, i.message, i.severity) for i in issues]


@functools.lru_cache(maxsize=512)
def resolved(folder: str) -> str:
    return os.path.realpath(folder)


def inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is under ``folder`` once links are resolved (the folder's once only;
    the file's own folder once per folder, the file itself only when it is a link)."""
    try:
        head, name = os.path.split(path)
        if name in ("", ".", "..") or ".." in head.split(os.sep) or os.path.islink(path):
            real = os.path.realpath(path)
        else:
            real = os.path.join(resolved(os.path.abspath(head)), name)
    except (OSError, ValueError):
        return False
    top = resolved(str(folder))
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def check_run(
    path: Path, root: Path, *, today: str | None = None, fast: bool = True
) -> tuple[list[Finding], RunSummary | None]:
    """Every problem of one run file, and its summary for the checks across files.
    ``fast=False`` reads every file with the full loader (the tests compare both ways)."""
    shown = str(path)
    today = today or datetime.now(UTC).strftime("%Y%m%d")
    if os.path.islink(path):
        return [Finding(shown, 1, "(file)", link_message(path))], None
    try:
        loaded = read_run(path, shown=shown, lines=True, fast=fast)
    except KbError as exc:
        return [Finding(shown, exc.line, exc.field or "(file)", with_hint(exc))], None
    data = loaded.data
    if not isinstance(data, dict):
        what = "empty" if data is None else f"a {type(data).__name__}"
        message = f"a run file is a YAML mapping of fields, but this is {what}"
        return [Finding(shown, 1, "(file)", message)], None
    problems = validate("run", data)
    if problems:
        return [
            Finding(shown, loaded.line_of(p.field), p.field, p.text(), p.severity) for p in problems
        ], None
    issues = run_rules(data, today=today)
    if data.get("synthetic") and inside(path, root / RUNS_DIR):
        issues.append(
            Issue(
                "synthetic",
                "synthetic scale-test data does not belong in data/runs (made by kb synth; "
                "keep it out of the knowledge base)",
            )
        )
    if path.stem != data["id"]:
        issues.append(Issue("id", f"{data['id']!r} but the file is named {path.name}"))
    for key in ("id", "repeat.group"):
        name = dotted_get(data, key)
        if isinstance(name, str) and name.lower() in RESERVED_NAMES:
            issues.append(
                Issue(
                    key,
                    f"{name!r} is a name Hugo gives a meaning (a bundle or a list page): its "
                    "page would hide the others; choose another",
                )
            )
    for key in ("machine", "client.machine"):
        slug = dotted_get(data, key)
        if slug and not is_file(root / HARDWARE_DIR / f"{slug}.md"):
            issues.append(
                Issue(
                    key, f"no hardware note content/hardware/{slug}.md (write one, or fix the slug)"
                )
            )
    reserved = maintainers_issue(data, path, root)
    if reserved is not None:
        issues.append(reserved)
    issues += raw_issues(data, root)
    findings = place(shown, loaded, issues)
    findings.sort(key=lambda f: f.line or 0)
    summary = RunSummary(
        path=shown,
        id=data["id"],
        raw_hashes=tuple(
            (i, item["sha256"]) for i, item in enumerate(data["raw"]) if item["kind"] == "output"
        ),
        raw_paths=tuple(item["path"] for item in data["raw"]),
        config_key=config_key(data),
        group=(data.get("repeat") or {}).get("group"),
        tps=data["results"].get("tps"),
        contributor=str(data["provenance"].get("contributor") or ""),
        session=session_key(data),
        repeat_index=int((data.get("repeat") or {}).get("index") or 0),
        repeat_of=int((data.get("repeat") or {}).get("of") or 0),
        disturbed=(data.get("machine_load") or {}).get("disturbed") is True,
        rerun_of=((data.get("repeat") or {}).get("design") or {}).get("rerun_of"),
        lines={k: loaded.line_of(k) or 1 for k in SUMMARY_LINES}
        | {
            f"raw.{i}.sha256": loaded.line_of(f"raw.{i}.sha256") or 1
            for i in range(len(data["raw"]))
        },
    )
    return findings, summary


def link_message(path: Path) -> str:
    """What is said of a contributed file that is a symbolic link (never followed)."""
    try:
        target = one_line(os.readlink(path), 120)
    except OSError:
        target = "?"
    return f"a symbolic link (to {target}): commit the file itself (links are not followed)"


def is_file(path: Path) -> bool:
    """``path.is_file()``, false for any path the system cannot even look up (too long…)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False
