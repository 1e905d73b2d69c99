"""How much results move on a machine, in sentences for its hardware page: the spread of
repeats inside one bench session, and how far a new session moves a result (the between-session
variance ``analyze.sessions`` estimates, per design). A reader needs both to weigh a difference
measured on the machine."""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any

from pgbench_kb import numbers as fmt

#: Repeats below this many give a CV too rough to summarise a machine by.
MIN_RUNS = 3


def _design_words(how_run: dict[str, Any]) -> str:
    """``runs of 60 s after a 10 s warm-up`` — how the runs of an estimate were made."""
    duration = how_run.get("benchmark.duration_s")
    per_client = how_run.get("benchmark.transactions_per_client")
    warm = how_run.get("benchmark.warmup.duration_s")
    if isinstance(duration, int | float):
        words = f"runs of {fmt.seconds(duration)}"
    elif isinstance(per_client, int):
        words = f"runs of {fmt.count(per_client, 'transaction')} per client"
    else:
        words = "runs of a length not stated"
    if isinstance(warm, int | float) and warm > 0:
        words += f" after a {fmt.seconds(warm)} warm-up"
    else:
        words += " without a warm-up"
    return words


def within_words(design: str, cvs: list[float]) -> str:
    low, high = fmt.percent(min(cvs)), fmt.percent(max(cvs))
    return (
        f"Inside one bench session, for {design}: the runs of a configuration varied by "
        f"{fmt.percent(statistics.median(cvs))} at the median (coefficient of variation; "
        f"{low} to {high} over {fmt.count(len(cvs), 'configuration')} of {MIN_RUNS} or more "
        "runs)."
    )


def between_words(estimate: dict[str, Any]) -> str:
    cv = estimate["cv_pct"]
    moves = (
        f"moves a configuration's result by about {fmt.percent(cv)}"
        if cv
        else "moved a configuration's result no more than its repeats' own noise explains"
    )
    return (
        f"Between bench sessions, for {_design_words(estimate.get('how_run') or {})}: a new "
        f"session {moves} "
        f"(coefficient of variation of the session effect, from "
        f"{fmt.count(estimate['configurations'], 'configuration')} measured in more than one "
        f"session: {fmt.count(estimate['sessions'], 'session mean')} in all, "
        f"{fmt.count(estimate['df'], 'degree')} of freedom)."
    )


NO_BETWEEN = (
    "No configuration of this machine has been measured in two bench sessions with its runs "
    "made the same way, so nothing here says how far a new session moves a result: results "
    "of different sessions are not compared."
)


def machine_noise(known: dict[str, Any]) -> dict[str, list[str]]:
    """Per machine measured by the bench: the sentences of its "how much results move"
    section (none for a machine known only from publications)."""
    # Per machine and design (how the runs were made): a busy campaign of 8-second trials and
    # a quiet one of minute-long trials are two different stories.
    cvs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for group in known.get("groups") or []:
        cv = (group.get("spread") or {}).get("cv_pct")
        measured = group.get("origin") == "measured" and (group.get("n") or 0) >= MIN_RUNS
        if measured and isinstance(cv, int | float):
            design = _design_words(group.get("incidental") or {})
            cvs[str(group.get("machine"))][design].append(float(cv))
    # A machine whose facts changed (a new kernel) has an entry per set of facts: one section.
    sessions: dict[str, set[str]] = defaultdict(set)
    designs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for entry in known.get("sessions") or []:
        machine = str(entry.get("machine"))
        sessions[machine].update(entry.get("sessions") or [])
        designs[machine].extend(entry.get("by_design") or [])
    out: dict[str, list[str]] = {}
    for machine in sorted(sessions):
        words = [f"Measured in {fmt.count(len(sessions[machine]), 'bench session')}."]
        by_design = sorted(cvs.get(machine, {}).items(), key=lambda item: -len(item[1]))
        words.extend(within_words(design, values) for design, values in by_design)
        words.extend(between_words(d) for d in designs[machine])
        if not designs[machine]:
            words.append(NO_BETWEEN)
        out[machine] = words
    return out
