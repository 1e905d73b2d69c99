"""The per-machine matrix's data (issue 31, item 3): each configuration's figures as analyze
gives them (``analyze/figures.py``) and as the page shows them (``derive/matrix.py``), with a
golden file of what is emitted into the page (regenerate with ``KB_UPDATE_GOLDENS=1``, read
the diff).

Regression (issue 31): a latency of runs whose logged latencies cannot be trusted must not
show as a figure; a figure not measured is a "—" with its reason, never a 0."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kbtest import assert_golden
from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.analyze.load import RunRecord
from pgbench_kb.derive import matrix
from pgbench_kb.derive.matrix import _cell, columns_of, matrices

GOLDEN = Path(__file__).parent / "golden"
SESSION = "20261127T071748Z-56e14e"
UNTRUSTED = {
    "status": "unreliable",
    "zero_latencies": 40,
    "logged": 1000,
    "share_pct": 4.0,
    "reason": "latencies unreliable: 4% of logged transactions (40 of 1,000) read 0 µs",
}


def run(
    name: str,
    i: int,
    tps: float,
    factors: dict,
    *,
    machine: str = "box",
    p95: float | None = None,
    wal: float | None = None,
    trust: dict | None = None,
    session: str = SESSION,
) -> RunRecord:
    series = None
    if p95 is not None:
        series = {
            "results": {
                "latency_percentiles_ms": {"p95": p95},
                "latency_percentiles_from": {"latencies": 5000},
            }
        }
    return RunRecord(
        id=f"{name}-r{i}", path=f"data/runs/{name}-r{i}.yaml", origin="measured",
        machine=machine, client_machine=None, repeat_group=name, statistic="single",
        of_runs=1, tps=tps, samples=None, latency_avg_ms=1.0, settings_profile=None,
        source_title=None, factors=dict(factors),
        incidental={"repeat.session": session}, series=series, latency_trust=trust,
        costs={"wal_bytes_per_txn": wal} if wal is not None else {},
    )  # fmt: skip


def planted() -> list[RunRecord]:
    base = {"benchmark.clients": 4, "postgres.version": "18.6"}
    return [
        # Three runs with every figure.
        *(run("base", i, t, base, p95=p, wal=w) for i, (t, p, w) in
          enumerate([(1000, 2.0, 5000), (1010, 2.2, 5100), (990, 2.1, 4900)], 1)),
        # Latencies of 0 µs in every run: no p95, the reason instead.
        *(run("async", i, t, base | {"postgres.settings.synchronous_commit": "off"}, p95=0.5,
              wal=w, trust=UNTRUSTED) for i, (t, w) in enumerate([(2500, 4000), (2400, 4100)], 1)),
        # No log and no counters: "—" for both, with why.
        *(run("fsync", i, t, base | {"postgres.settings.fsync": "off"})
          for i, t in enumerate([3000, 3100], 1)),
        # Alone on its machine: no matrix there.
        run("lone", 1, 500, base, machine="other"),
    ]  # fmt: skip


def made() -> dict:
    known = knowledge_from_runs(planted(), latency=True)
    placed = [
        {"id": g["id"], "title": f"config {g['id'].split('-')[-1]}", "url": f"groups/{g['id']}/"}
        for g in known["groups"]
    ]
    return {"groups": known["groups"], "matrices": matrices(known, placed)}


def test_analyze_gives_each_group_its_trustworthy_figures():
    groups = {g["id"].split("-")[-1]: g["figures"] for g in made()["groups"]}
    assert groups["base"]["latency_p95_ms"] == {"center": 2.1, "n": 3}
    assert groups["base"]["wal_bytes_per_txn"] == {"center": 5000, "n": 3}
    # Untrusted latencies give no latency figure at all.
    assert not any(m.startswith("latency_") for m in groups["async"])
    assert groups["async"]["wal_bytes_per_txn"]["center"] == 4050
    assert "latency_p95_ms" not in groups["fsync"] and "wal_bytes_per_txn" not in groups["fsync"]


def test_the_matrix_data_matches_golden():
    data = made()["matrices"]
    assert list(data) == ["box"]  # a machine with one configuration has no matrix
    assert_golden(GOLDEN / "matrix.json", json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def test_no_figure_without_trust_and_every_dash_has_its_reason():
    box = made()["matrices"]["box"]
    metrics = [c["metric"] for c in box["columns"]]
    assert metrics == ["tps", "latency_p95_ms", "wal_bytes_per_txn"]
    notes = {n["n"]: n["text"] for n in box["notes"]}
    rows = {r["title"]: dict(zip(metrics, r["cells"], strict=True)) for r in box["rows"]}
    assert rows["config base"]["latency_p95_ms"]["text"] == "2.1"
    assert rows["config base"]["tps"]["raw"] == "1000"
    untrusted = rows["config async"]["latency_p95_ms"]
    assert untrusted["text"] == "—" and untrusted["raw"] == ""
    assert "0 µs" in notes[untrusted["note"]]
    for metric in ("latency_p95_ms", "wal_bytes_per_txn"):
        cell = rows["config fsync"][metric]
        assert cell["text"] == "—" and cell["note"] in notes
    # Every cell without a figure has a note; every figure is a number.
    for row in box["rows"] + box["sessions"]:
        for cell in row["cells"]:
            assert (cell["value"] is None) == (cell["text"] == "—") == (cell["note"] is not None)
        # Named in words: the session by its start, never its random token.
        assert row["session"].startswith("bench session 2026-11-27 07:17 UTC")
        assert not re.search(r"\d{8}T\d{6}Z-[0-9a-f]{6}", json.dumps(row))


def test_costs_show_as_columns_only_where_a_configuration_has_them():
    assert [c["metric"] for c in columns_of([{"figures": {}}])] == ["tps"]
    # A cost zero in every configuration sets nothing apart: no column.
    zero = columns_of([{"figures": {"temp_bytes_per_txn": {"center": 0, "n": 2}}}])
    assert [c["metric"] for c in zero] == ["tps"]
    # No p95 anywhere, but latencies that cannot be trusted: the column says why.
    untrusted = columns_of([{"id": "g", "figures": {}}], {"g": [UNTRUSTED]})
    assert [c["metric"] for c in untrusted] == ["tps", "latency_p95_ms"]
    wal = columns_of([{"figures": {"wal_bytes_per_txn": {"center": 1, "n": 1}}}])
    assert wal[-1] == {"metric": "wal_bytes_per_txn", "label": "WAL bytes",
                       "unit": "per transaction", "better": "lower"}  # fmt: skip


def test_a_figure_with_too_few_digits_is_set_against_nothing():
    """0.000003 full-page images a transaction (analyze keeps six decimals) against 0.000004
    would read as a change of a third."""
    assert _cell(0.000003)["coarse"] and _cell(0.000003)["text"] == "0.000003"
    assert "coarse" not in _cell(0.0012) and "coarse" not in _cell(0)


def test_past_the_most_rows_the_latest_measured_are_kept(monkeypatch):
    """A page stays light as runs pile up: the configurations whose latest run is newest
    (run ids begin with when they were recorded; here, by name), and how many there are."""
    monkeypatch.setattr(matrix, "MOST_ROWS", 2)
    box = made()["matrices"]["box"]
    assert box["total"] == 3
    assert [r["title"] for r in box["rows"]] == ["config base", "config fsync"]
    assert [r["title"] for r in box["sessions"]] == ["config base", "config fsync"]


LATER = "20261127T082200Z-9f8e7d"


def two_sessions() -> dict:
    """One configuration measured in two bench sessions (3 runs and 2), another in one."""
    base = {"benchmark.clients": 4, "postgres.version": "18.6"}
    runs = [
        *(run("base", i, t, base, p95=p, wal=w) for i, (t, p, w) in
          enumerate([(1000, 2.0, 5000), (1010, 2.2, 5100), (990, 2.1, 4900)], 1)),
        *(run("base-later", i, t, base, wal=w, session=LATER) for i, (t, w) in
          enumerate([(1200, 0.000004), (1220, 0.000004)], 1)),
        *(run("fsync", i, t, base | {"postgres.settings.fsync": "off"})
          for i, t in enumerate([3000, 3100], 1)),
    ]  # fmt: skip
    for r in runs[3:5]:
        r.repeat_group = "base-later"
    known = knowledge_from_runs(runs, latency=True)
    placed = [
        {"id": g["id"], "title": f"config {g['id'].split('-')[-1]}", "url": f"groups/{g['id']}/"}
        for g in known["groups"]
    ]
    return matrices(known, placed)["box"]


def test_a_configuration_of_several_sessions_is_one_row_of_their_medians():
    """Issue 31: the matrix had a row per bench session; a reader wants one per configuration,
    the sessions pooled (the median of the sessions' medians, saying how many of each), and
    each session's row one click away."""
    box = two_sessions()
    metrics = [c["metric"] for c in box["columns"]]
    assert box["pooled"] and box["total"] == 2 and box["total_sessions"] == 3
    assert len(box["rows"]) == 2 and len(box["sessions"]) == 3
    pooled = {r["title"]: dict(zip(metrics, r["cells"], strict=True)) for r in box["rows"]}
    both = next(r for r in box["rows"] if r["sessions"] == 2)
    assert both["session"] == (
        "median of 2 bench sessions (2026-11-27 07:17 UTC; 2026-11-27 08:22 UTC), 5 runs"
    )
    # tps: the sessions' medians 1,000 and 1,210, pooled as their median.
    base = pooled[both["title"]]
    assert base["tps"]["value"] == 1105.0 and base["tps"]["text"] == "1,105"
    # p95 only in the first session: its figure, with a note that the other has none.
    assert base["latency_p95_ms"]["value"] == 2.1
    notes = {n["n"]: n["text"] for n in box["notes"]}
    assert "sessions that have this figure" in notes[base["latency_p95_ms"]["note"]]
    # The session rows keep their own figures.
    apart = sorted(r["cells"][0]["value"] for r in box["sessions"] if "fsync" not in r["title"])
    assert apart == [1000, 1210]
    # A configuration of one session: its row as that session's, with its runs counted.
    fsync = next(r for r in box["rows"] if r["sessions"] == 1)
    assert fsync["session"] == "bench session 2026-11-27 07:17 UTC, 2 runs"
    assert fsync["key"].startswith("c-") and fsync["url"].startswith("groups/")
