"""Rules on what a contribution should be (``runs.tryout``): a smoke run is not a result. It is
a warning in a whole-tree check and an error among the files a pull request changes
(``kb check --changed``, ``changed.py``)."""

from __future__ import annotations

from typing import Any

from pgbench_kb.runs.check.report import Issue
from pgbench_kb.runs.tryout import is_smoke

SMOKE_FIELD = "provenance.harness.profile"
SMOKE_MESSAGE = (
    "a smoke run (profile smoke, seconds long): it shows the harness works, it is not a result; "
    "the site lists it nowhere, and a pull request may not add it: bench with the default "
    "profile (make bench) and submit those runs (CONTRIBUTING.md, 'What to contribute')"
)


def rules_tryout(run: dict[str, Any]) -> list[Issue]:
    if is_smoke(run):
        return [Issue(SMOKE_FIELD, SMOKE_MESSAGE, severity="warning")]
    return []
