"""A disturbed trial run again (profile key rerun_disturbed): the rerun names the run it replaces
(repeat.design.rerun_of) and takes its repeat.index, which kb check accepts only when the named
run is a disturbed member of the same group with that index."""

from __future__ import annotations

from pathlib import Path

import yaml

from checkkit import good_run, report_of, write

STEAL = {
    "interval_s": 60.0,
    "cpus": 2,
    "other_processes": {"cpu_s": 0.6, "core_share": 0.01, "top": []},
    "steal_pct": 3.5,
    "limits": {"other_core_share": 0.1, "steal_pct": 2.0},
    "disturbed": True,
    "reasons": ["steal was 3.5% of CPU time (limit 2%)"],
}
QUIET = {**STEAL, "steal_pct": 0.4, "disturbed": False, "reasons": []}


def _trial(root: Path, name: str, index: int, load: dict, rerun_of: str | None = None) -> Path:
    run = good_run()
    run["id"] = name
    run["machine_load"] = load
    design = {"seed": 7, "session": 1, "sessions": 1, "position": index}
    if rerun_of:
        design["rerun_of"] = rerun_of
    run["repeat"] = {"group": "box-session-1", "index": index, "of": 2, "design": design}
    return write(root, run)


def _repeat_lines(root: Path, *paths: Path) -> list[str]:
    return [line for line in report_of(root, *paths).splitlines() if "repeat" in line]


def test_a_rerun_replaces_the_disturbed_run_it_names(project: Path) -> None:
    paths = [
        _trial(project, "t1", 1, STEAL),
        _trial(project, "t2", 2, QUIET),
        _trial(project, "t1-again", 1, QUIET, rerun_of="t1"),
    ]
    assert _repeat_lines(project, *paths) == []


def test_a_chain_of_reruns_replaces_each_disturbed_link(project: Path) -> None:
    paths = [
        _trial(project, "t1", 1, STEAL),
        _trial(project, "t1-again", 1, STEAL, rerun_of="t1"),
        _trial(project, "t1-third", 1, QUIET, rerun_of="t1-again"),
        _trial(project, "t2", 2, QUIET),
    ]
    assert _repeat_lines(project, *paths) == []


def test_a_rerun_of_a_quiet_run_is_an_error_and_its_index_a_duplicate(project: Path) -> None:
    paths = [
        _trial(project, "t1", 1, QUIET),
        _trial(project, "t2", 2, QUIET),
        _trial(project, "t1-again", 1, QUIET, rerun_of="t1"),
    ]
    found = _repeat_lines(project, *paths)
    assert sorted(line.split(": ", 2)[1] for line in found) == [
        "repeat.design.rerun_of",
        "repeat.index",
        "repeat.of",
    ], found
    (named,) = [line for line in found if ": repeat.design.rerun_of: " in line]
    assert named.startswith("data/runs/t1-again.yaml:")
    assert named.endswith(
        "t1 is not a disturbed run of group box-session-1 with repeat.index 1: a rerun names "
        "the disturbed run it replaces"
    )


def test_a_rerun_must_take_the_index_of_the_run_it_replaces(project: Path) -> None:
    paths = [
        _trial(project, "t1", 1, STEAL),
        _trial(project, "t2", 2, QUIET),
        _trial(project, "t2-again", 2, QUIET, rerun_of="t1"),
    ]
    found = _repeat_lines(project, *paths)
    assert any(
        line.startswith("data/runs/t2-again.yaml:") and "repeat.design.rerun_of" in line
        for line in found
    ), found


def test_a_disturbed_run_makes_its_group_neither_noisy_nor_an_outlier(project: Path) -> None:
    """Bug: the flush-tracer session's groups were warned "noisy" over 10 runs and their
    disturbed runs named outliers, though disturbed runs feed no group (their own warning says
    they were measured on a busy machine)."""
    tps = good_run()["results"]["tps"]
    paths = [
        _set_tps(_trial(project, "t1", 1, STEAL), tps * 0.6),
        _trial(project, "t2", 2, QUIET),
        _trial(project, "t1-again", 1, QUIET, rerun_of="t1"),
    ]
    report = report_of(project, *paths)
    assert "busy machine" in report
    assert "noisy repeats" not in report and "outlier" not in report, report


def test_a_group_whose_every_run_was_disturbed_is_checked_without_a_crash(project: Path) -> None:
    """Bug: a `make bench` on a host with high steal left groups of disturbed runs only, and
    `kb check` (so `make site`) stopped with an IndexError traceback."""
    paths = [_trial(project, "t1", 1, STEAL), _trial(project, "t2", 2, STEAL)]
    report = report_of(project, *paths)
    assert "busy machine" in report and "Traceback" not in report, report


def _set_tps(path: Path, tps: float) -> Path:
    """The run file at ``path`` with its tps changed (a slower, disturbed trial)."""
    run = yaml.safe_load(path.read_text(encoding="utf-8"))
    run["results"]["tps"] = tps
    path.write_text(yaml.safe_dump(run, sort_keys=False), encoding="utf-8")
    return path
