"""`kb plan` for every shipped profile, as people read it and as bash reads it, against golden
text (tests/harness/golden/plans.txt; regenerate with KB_UPDATE_GOLDENS=1 after an intended
change, and read the diff).

Regression guard for the split of bench/profile.py into bench/profile/ (issue 34): the human
plan and the wire format handed to bash must stay byte for byte what they were. Each profile is
planned with a fixed seed (its own, else 4242) for a client of 2 cores; the wire format of each
is held by its sha256, and shown in full for smoke, with its separators made visible."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

from kbtest import assert_golden
from pgbench_kb.bench.profile import (
    FIELD_SEP,
    PROFILES_DIR,
    UNIT_SEP,
    describe_plan,
    load_profile,
    render_plan,
)

GOLDEN = Path(__file__).parent / "golden" / "plans.txt"
REPO = Path(__file__).resolve().parents[2]
SEED = 4242
CORES = 2


def _plans() -> str:
    parts = []
    paths = sorted([*PROFILES_DIR.glob("*.yaml"), *PROFILES_DIR.glob("campaign/*.yaml")])
    for path in paths:
        profile = load_profile(str(path))
        if profile.seed is None:
            profile = dataclasses.replace(profile, seed=SEED)
        wire = render_plan(profile, cores=CORES)
        name = path.relative_to(REPO).as_posix()
        parts.append(f"=== {name}\n{describe_plan(profile, cores=CORES)}")
        parts.append(f"--- wire sha256 {hashlib.sha256(wire.encode()).hexdigest()}\n")
        if path.stem == "smoke" and path.parent == PROFILES_DIR:
            parts.append(wire.replace(FIELD_SEP, " | ").replace(UNIT_SEP, ","))
    return "".join(parts).replace(str(REPO), "REPO")


def test_every_shipped_plan_matches_golden() -> None:
    text = _plans()
    assert_golden(GOLDEN, text)
