"""What a contribution should be, as rules on one run: a smoke run (the harness's ``smoke``
profile: seconds long, to prove the harness works) is not a result; a run shorter than
``MIN_DURATION_S`` or at a scale below ``MIN_SCALE`` is one, but a short one, and says so; a
measured run without a harness was run by hand, and says so too (or, imported from a result
tree someone published, says that). The scale counts only for pgbench's built-in scripts: a
custom script (a published star-join, say) need not read pgbench's tables at all, so the
scaling factor pgbench prints beside it says nothing about its data.

The knowledge base keeps smoke runs' pages (labelled) but lists them nowhere as results (home
page, explorer) and leaves them out of every group, comparison and answer; ``kb check`` warns
about one, and ``kb check --changed`` refuses one in a pull request. CONTRIBUTING.md states
the same figures.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

SMOKE_PROFILES = frozenset({"smoke"})
#: Below these a run is labelled short (CONTRIBUTING.md, "What to contribute"). The default
#: profile's trials are 15 s after a 5 s warm-up: shorter ones (8 s, no warm-up) gave repeats
#: that varied by 9-34% on a shared two-core machine (scripts/profiles/default.yaml).
MIN_DURATION_S = 15
MIN_SCALE = 5


def _get(run: dict[str, Any], dotted: str) -> Any:
    node: Any = run
    for key in dotted.split("."):
        node = node.get(key) if isinstance(node, dict) else None
    return node


def profile_name(run: dict[str, Any]) -> str | None:
    """The bench profile's name: ``smoke`` of ``smoke`` or ``scripts/profiles/smoke.yaml``."""
    profile = _get(run, "provenance.harness.profile")
    if not isinstance(profile, str) or not profile:
        return None
    return PurePosixPath(profile).name.removesuffix(".yaml")


def is_smoke(run: dict[str, Any]) -> bool:
    """Whether the run is a smoke run of the harness (not a result)."""
    return profile_name(run) in SMOKE_PROFILES


def builtin_only(run: dict[str, Any]) -> bool:
    """Whether every script of the run's workload is one of pgbench's built-in ones (the only
    scripts whose data pgbench's scale sizes); an unknown workload counts as built-in."""
    scripts = _get(run, "benchmark.workload.scripts")
    if not isinstance(scripts, list) or not scripts:
        return True
    return all(isinstance(s, dict) and s.get("builtin") for s in scripts)


def shortness(run: dict[str, Any]) -> str | None:
    """Why a measured run is short (``a 3 s run at scale 2``), or None when it is not. A
    custom script's run is never short for its scale (see the module's note)."""
    if run.get("origin") != "measured":
        return None
    duration = _get(run, "benchmark.duration_s")
    scale = _get(run, "benchmark.scale") if builtin_only(run) else None
    reasons = []
    if isinstance(duration, int | float) and duration < MIN_DURATION_S:
        reasons.append(f"{duration:g} s long (under {MIN_DURATION_S} s)")
    if isinstance(scale, int | float) and scale < MIN_SCALE:
        reasons.append(f"at scale {scale:g} (under {MIN_SCALE})")
    return " and ".join(reasons) or None


def label(run: dict[str, Any]) -> str | None:
    """The words a page shows beside a smoke, short or hand-run run, or None."""
    if is_smoke(run):
        return "smoke run (profile smoke): it shows the harness works here; it is not a result"
    parts = []
    short = shortness(run)
    if short:
        parts.append(f"short run: {short}; read its figures with care")
    published = _get(run, "provenance.source.kind") == "measurement"
    if run.get("origin") == "measured" and not _get(run, "provenance.harness") and published:
        parts.append(
            f"imported from a result tree its author published "
            f"({_get(run, 'provenance.source.title')}): the figures as pgbench printed them "
            "there; the setup as the author's scripts and pages give it, declared in the "
            "mapping, not detected"
        )
    elif run.get("origin") == "measured" and not _get(run, "provenance.harness"):
        parts.append(
            "run by hand: imported with kb import; its setup is as declared "
            "(provenance.declared), not detected"
        )
    return "; ".join(parts) or None
