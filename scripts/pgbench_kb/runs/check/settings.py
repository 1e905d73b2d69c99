"""Rules on ``postgres.settings``: each name is a setting of the run's PostgreSQL major version,
each value one that setting can take (type, allowed values, range), checked against the lists
in ``runs/settings/`` (``runs.pgsettings``). A version kb has no list for gets a note saying its
names were not checked.
"""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.pgsettings import (
    major_of,
    name_problem,
    settings_of,
    unchecked_note,
    value_problem,
)

FIELD = "postgres.settings"


def rules_settings(run: dict[str, Any]) -> list[Issue]:
    postgres = run.get("postgres") or {}
    settings = postgres.get("settings")
    version = postgres.get("version")
    if not isinstance(settings, dict) or not settings or version is None:
        return []
    major = major_of(version)
    known = settings_of(major) if major else None
    if known is None or major is None:
        return [Issue(FIELD, unchecked_note(version), severity="note")]
    issues = []
    for name, value in settings.items():
        field = f"{FIELD}.{name}"
        problem = name_problem(str(name), known, major)
        if problem is not None:
            issues.append(Issue(field, problem))
            continue
        setting = known.get(str(name).lower())
        bad = value_problem(value, setting) if setting is not None else None
        if bad is not None:
            issues.append(Issue(field, f"PostgreSQL {major}: {bad}"))
    return issues
