"""Bench profiles: read and validate a profile YAML, expand it into the trials of a bench.

``scripts/bench.sh`` never reads YAML. It asks ``kb plan --for-bash PROFILE`` for the trials and
runs them in order; ``kb plan PROFILE`` prints the same plan for people. Every problem in a
profile is a ``ProfileError`` located as ``path:line: field: message (hint)``; ``kb check``
reports every problem of every shipped profile the same way.

The keys of a profile are published as JSON Schema, ``runs/schemas/profile.schema.json`` (each
with its description; docs/harness.md has the long form, docs/data-format.md the reference).
One module per job:

================  ==============================================================================
``model.py``      ``Profile``, ``Workload``, ``Script``, ``Trial`` and the limits
``reading.py``    the file, its schema, the ``Profile`` built from valid data (``load_profile``)
``key_rules.py``  what the schema cannot say: one key against another, files, names once each,
                  the plan's size, TPC-B-like's branches, a commit_delay that can never apply
``expansion.py``  trials in a seeded random order, by session and round (``expand``)
``wire.py``       the plan handed to bash (``render_plan``; its format is in that module)
``human_plan.py`` the plan for people and its wall-time estimate (``describe_plan``)
================  ==============================================================================

A new key: add it to the schema (with its description), to ``Profile`` and ``build_profile``,
and, when it changes the trials, to ``expansion`` (and ``wire`` if bash needs it).
"""

from __future__ import annotations

from pgbench_kb.bench.profile.expansion import (
    client_cores,
    draw_seed,
    expand,
    threads_for,
    trial_count,
    trial_factors,
)
from pgbench_kb.bench.profile.human_plan import describe_plan, estimate_seconds, restarts_of
from pgbench_kb.bench.profile.model import (
    BUILTINS,
    DEFAULT_LOGGED_LATENCIES,
    DEFAULT_SAMPLING_RATE,
    MAX_SESSIONS,
    MAX_TRIALS,
    PGBENCH_INT_MAX,
    SEED_LIMIT,
    Profile,
    Script,
    Trial,
    Workload,
)
from pgbench_kb.bench.profile.reading import (
    PROFILES_DIR,
    load_profile,
    profile_problems,
    resolve_profile_path,
    shipped_profiles,
)
from pgbench_kb.bench.profile.wire import FIELD_SEP, UNIT_SEP, render_plan

__all__ = [
    "BUILTINS",
    "DEFAULT_LOGGED_LATENCIES",
    "DEFAULT_SAMPLING_RATE",
    "FIELD_SEP",
    "MAX_SESSIONS",
    "MAX_TRIALS",
    "PGBENCH_INT_MAX",
    "PROFILES_DIR",
    "SEED_LIMIT",
    "UNIT_SEP",
    "Profile",
    "Script",
    "Trial",
    "Workload",
    "client_cores",
    "describe_plan",
    "draw_seed",
    "estimate_seconds",
    "expand",
    "load_profile",
    "profile_problems",
    "render_plan",
    "resolve_profile_path",
    "restarts_of",
    "shipped_profiles",
    "threads_for",
    "trial_count",
    "trial_factors",
]
