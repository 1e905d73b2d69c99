"""How much results move on a machine (issue #20: the development machine's between-session
variance published): the hardware page's sentences from the knowledge, and a real analysis
of planted sessions read through them."""

from __future__ import annotations

from planted import records

from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.derive.machine_noise import NO_BETWEEN, machine_noise

BASE = {"benchmark.workload.name": "select-only", "benchmark.scale": 8, "benchmark.clients": 4}
OTHER = {**BASE, "postgres.settings.shared_buffers": "1GB"}
DESIGN = {"benchmark.duration_s": 60, "benchmark.warmup.duration_s": 10.0}


def group(name: str, values: list[float], factors: dict, session: str) -> list:
    return records(name, values, factors, incidental={"repeat.session": session, **DESIGN})


def test_sessions_within_and_between_in_words():
    known = knowledge_from_runs(
        group("a-s1", [1000, 1010, 990], BASE, "20261201T100000Z-aaaa01")
        + group("a-s2", [1100, 1090, 1110], BASE, "20261202T100000Z-bbbb02")
        + group("b-s1", [2000, 2040, 1960], OTHER, "20261201T100000Z-aaaa01")
        + group("b-s2", [2200, 2180, 2220], OTHER, "20261202T100000Z-bbbb02")
    )
    (words,) = machine_noise(known).values()
    assert words[0] == "Measured in 2 bench sessions."
    assert words[1] == (
        "Inside one bench session, for runs of 60 s after a 10 s warm-up: the runs of a "
        "configuration varied by 0.95% at the median (coefficient of variation; 0.91% to 2% "
        "over 4 configurations of 3 or more runs)."
    )
    # Both configurations 10% higher in the second session: the session effect is about
    # 6.7% (a shift of ln 1.1 between two sessions), less what the repeats' noise explains.
    assert words[2].startswith(
        "Between bench sessions, for runs of 60 s after a 10 s warm-up: a new session moves "
        "a configuration's result by about "
    )
    assert words[2].endswith(
        "from 2 configurations measured in more than one session: 4 session means in all, "
        "2 degrees of freedom)."
    )


def test_a_machine_measured_in_one_session_says_nothing_of_sessions():
    known = knowledge_from_runs(
        group("a-s1", [1000, 1010, 990], BASE, "20261201T100000Z-aaaa01")
        + group("b-s1", [2000, 2040, 1960], OTHER, "20261201T100000Z-aaaa01")
    )
    (words,) = machine_noise(known).values()
    assert words[0] == "Measured in 1 bench session."
    assert words[-1] == NO_BETWEEN
