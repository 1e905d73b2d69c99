"""Per-transaction costs (issue 36, item 1): derived from a run file's counters over the
transactions pgbench processed, compared like tps with lower better, the zero rule, and the
smallest change worth reporting (docs/comparisons.md, "Per-transaction costs")."""

from __future__ import annotations

from typing import Any

import pytest
from planted import records

from kbtest import REPO
from pgbench_kb.analyze import knowledge_from_runs
from pgbench_kb.analyze.costs import cost_sentence, reported
from pgbench_kb.analyze.load import _load_one
from pgbench_kb.analyze.txcosts import run_costs

#: A shipped TPC-B-like run of the durability campaign (full_page_writes off, no checkpoint in
#: the trial): its counters, checked by hand below.
SHIPPED = "data/runs/2026/11/20261127T054943Z-kb-dev-epyc-2c-tpcb-like-s8-c4-3b730ef6.yaml"
SESSION = {"repeat.session": "20261201T100000Z-aaaa01"}
BASE = {"benchmark.workload.name": "tpcb-like", "benchmark.scale": 8, "benchmark.clients": 4}


def test_a_shipped_run_s_costs_are_its_counters_over_pgbench_s_transactions() -> None:
    # Read as kb compare reads it (the fast reader skips the counters no analysis uses: not
    # these). By hand, from the file: 432,223 transactions processed (xact_commit, 432,279,
    # also counts the harness's own queries and is not the divisor).
    record = _load_one((str(REPO / SHIPPED), SHIPPED, str(REPO)))
    assert not isinstance(record, str), record
    assert record.costs == {
        "wal_bytes_per_txn": 426.236,  # 184,229,000 bytes / 432,223
        "wal_records_per_txn": 6.26079,  # 2,706,056 / 432,223
        "wal_fpi_per_txn": 0.0,  # full_page_writes off: no image at all
        "buffers_written_per_txn": 0.0139534,  # (0 + 6,023 + 8) / 432,223
        "blocks_read_per_txn": 0.0100689,  # 4,352 / 432,223
        "temp_bytes_per_txn": 0.0,
        "bench_cpu_us_per_txn": 296.953,  # 128.35 s × 10⁶ / 432,223
    }


def _run(**changes: Any) -> dict[str, Any]:
    run: dict[str, Any] = {
        "results": {"of_runs": 1, "transactions_processed": 1000},
        "server_stats": {
            "wal_bytes": 500_000,
            "wal_records": 6000,
            "wal_fpi": 40,
            "buffers_written_checkpoint": 10,
            "buffers_written_bgwriter": 5,
            "buffers_written_backend": None,
            "blocks_read": 3,
            "temp_bytes": 0,
        },
        "machine_load": {"bench_cpu_s": 0.3, "server_cpu_s": 0.2, "client_cpu_s": 0.1},
    }
    for section, values in changes.items():
        run[section] = {**run[section], **values}
    return run


def test_a_cost_needs_every_counter_it_sums_and_a_transaction_count() -> None:
    costs = run_costs(_run())
    # Backends' writes unknown (PostgreSQL 17+ runs recorded before pg_stat_io was read): no
    # buffers written at all, rather than a sum that leaves them out.
    assert "buffers_written_per_txn" not in costs
    assert costs["wal_bytes_per_txn"] == 500.0
    assert costs["wal_fpi_per_txn"] == 0.04
    assert costs["server_cpu_us_per_txn"] == 200.0
    assert costs["client_cpu_us_per_txn"] == 100.0
    assert costs["bench_cpu_us_per_txn"] == 300.0
    with_backend = run_costs(_run(server_stats={"buffers_written_backend": 5}))
    assert with_backend["buffers_written_per_txn"] == 0.02
    assert run_costs(_run(results={"transactions_processed": 0})) == {}
    assert run_costs(_run(results={"of_runs": 3})) == {}, "a published statistic: no counters"
    assert "wal_bytes_per_txn" not in run_costs(_run(server_stats={"wal_bytes": None}))


def _group(name: str, tps: float, wal: list[float], fpi: list[float], **factors: Any) -> list:
    runs = records(name, [tps * s for s in (1.0, 1.01, 0.99, 1.005, 0.995)], {**BASE, **factors},
                   incidental=SESSION)  # fmt: skip
    for run, w, f in zip(runs, wal, fpi, strict=True):
        run.costs = {"wal_bytes_per_txn": w, "wal_fpi_per_txn": f}
    return runs


def _costs(knowledge: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    (tps,) = [c for c in knowledge["comparisons"] if c["metric"] == "tps"]
    costs = {c["metric"]: c for c in knowledge["comparisons"] if c["metric"].endswith("_per_txn")}
    assert all(c["tps_comparison"] == tps["id"] for c in costs.values())
    return tps, costs


def _known(a: list, b: list) -> dict[str, Any]:
    return knowledge_from_runs(a + b, latency=True)


NOISE = (1.0, 1.01, 0.99, 1.005, 0.995)


def test_costs_are_compared_like_tps_and_lower_is_better() -> None:
    a = _group("a", 1000, [500 * s for s in NOISE], [0.02 * s for s in NOISE])
    b = _group("b", 1010, [1000 * s for s in NOISE], [0.01 * s for s in NOISE],
               **{"postgres.settings.checkpoint_timeout": "30s"})  # fmt: skip
    tps, costs = _costs(_known(a, b))
    assert tps["verdict"] == "within_noise"
    wal, fpi = costs["wal_bytes_per_txn"], costs["wal_fpi_per_txn"]
    assert (wal["verdict"], wal["outcome"], wal["better_when"]) == ("higher", "worse", "lower")
    assert (fpi["verdict"], fpi["outcome"]) == ("lower", "better")
    assert wal["ratio"] == 2.0 and wal["change_pct"] == 100.0
    assert wal["test"]["ci95_ratio"][0] > 1.9 and wal["family"]["significant"]
    # Its own Holm family: the question, the machine and the metric.
    assert wal["family"]["id"].endswith("wal_bytes_per_txn")
    assert wal["sessions"]["shared"] is True
    assert cost_sentence(tps, [wal, fpi]) == (
        "2.0× the WAL bytes, 0.50× the full-page images, tps within the noise"
    )


def test_a_change_under_five_percent_is_not_put_in_words() -> None:
    a = _group("a", 1000, [500 * s for s in NOISE], [0.02 * s for s in NOISE])
    b = _group("b", 1000, [510 * s for s in NOISE], [0.02 * s for s in NOISE],
               **{"postgres.settings.wal_compression": "on"})  # fmt: skip
    tps, costs = _costs(_known(a, b))
    wal = costs["wal_bytes_per_txn"]
    assert wal["verdict"] == "within_noise" or not reported(wal)
    assert wal["smallest_change_pct"] == 5.0
    assert cost_sentence(tps, list(costs.values())) is None


@pytest.mark.parametrize(
    ("fpi_a", "fpi_b", "verdict"),
    [
        ([0.0] * 5, [0.03, 0.031, 0.029, 0.03, 0.03], "higher"),
        ([0.03, 0.031, 0.029, 0.03, 0.03], [0.0] * 5, "lower"),
        ([0.0, 0.0, 0.0, 0.0, 0.01], [0.03, 0.031, 0.029, 0.03, 0.03], "spread_unknown"),
    ],
)
def test_a_zero_side_is_told_as_zero_never_as_minus_100_percent(fpi_a, fpi_b, verdict) -> None:
    a = _group("a", 1000, [500 * s for s in NOISE], fpi_a)
    b = _group("b", 1000, [500 * s for s in NOISE], fpi_b,
               **{"postgres.settings.full_page_writes": False})  # fmt: skip
    tps, costs = _costs(_known(a, b))
    fpi = costs["wal_fpi_per_txn"]
    assert fpi["verdict"] == verdict
    assert fpi["ratio"] is None or verdict == "spread_unknown"
    assert fpi["change_pct"] is None or verdict == "spread_unknown"
    assert fpi["test"]["ci95_ratio"] is None  # no interval: 0 against x has no ratio
    if verdict == "spread_unknown":
        assert fpi["family"] is None and fpi["test"]["method"] is None
    else:
        # Every run of one side below every run of the other, 5 against 5: exact
        # Mann–Whitney, two-sided p = 2 / C(10, 5) = 2 / 252, tested in its Holm family.
        assert fpi["test"] == {
            "method": "mann-whitney-exact", "ci95_ratio": None, "df": None, "p": 0.00793651
        }  # fmt: skip
        assert fpi["family"]["significant"] and fpi["family"]["id"].endswith("wal_fpi_per_txn")
    assert fpi["zero_runs"] == {"a": fpi_a.count(0.0), "b": fpi_b.count(0.0)}
    sentence = cost_sentence(tps, list(costs.values()))
    if verdict == "higher":
        assert sentence == "the full-page images: none → 0.03, tps within the noise"
    elif verdict == "lower":
        assert sentence == "the full-page images: 0.03 → none, tps within the noise"
    else:
        assert sentence is None


def test_zero_against_not_zero_in_two_runs_each_is_not_enough() -> None:
    """Two runs a side: 2 / C(4, 2) = 0.33, no verdict outside the noise."""
    a = _group("a", 1000, [500 * s for s in NOISE], [0.0] * 5)[:2]
    b = _group("b", 1000, [500 * s for s in NOISE], [0.03] * 5,
               **{"postgres.settings.checkpoint_timeout": "30s"})[:2]  # fmt: skip
    tps, costs = _costs(_known(a, b))
    fpi = costs["wal_fpi_per_txn"]
    assert (fpi["verdict"], fpi["test"]["p"]) == ("within_noise", 0.333333)
    assert not reported(fpi) and cost_sentence(tps, [fpi]) is None


def test_a_cost_zero_on_both_sides_is_not_compared() -> None:
    a = _group("a", 1000, [500 * s for s in NOISE], [0.0] * 5)
    b = _group("b", 1000, [700 * s for s in NOISE], [0.0] * 5,
               **{"postgres.settings.full_page_writes": False})  # fmt: skip
    _tps, costs = _costs(_known(a, b))
    assert set(costs) == {"wal_bytes_per_txn"}


def test_the_shipped_data_has_cost_comparisons_with_verdicts(
    shipped_knowledge: dict[str, Any],
) -> None:
    """The first "Done when" of issue 36 on the shipped data: WAL and full-page images per
    transaction of checkpoint_timeout 30s against 30min are decided, significant, and read
    as the issue's sentence does."""
    known = shipped_knowledge
    by_tps: dict[str, list[dict[str, Any]]] = {}
    for c in known["comparisons"]:
        if c["metric"].endswith("_per_txn"):
            by_tps.setdefault(c["tps_comparison"], []).append(c)
    timeout = [
        c for c in known["comparisons"]
        if c["metric"] == "tps" and c["factor"] == "postgres.settings.checkpoint_timeout"
        and c["verdict"] != "not_comparable"
    ]  # fmt: skip
    assert timeout
    for c in timeout:
        costs = {x["metric"]: x for x in by_tps[c["id"]]}
        assert costs["wal_bytes_per_txn"]["verdict"] == "higher"
        assert costs["wal_fpi_per_txn"]["verdict"] == "higher"
        assert costs["wal_bytes_per_txn"]["family"]["significant"]
        sentence = cost_sentence(c, by_tps[c["id"]])
        assert sentence is not None and sentence.startswith("2.0× the WAL bytes, ")


def test_kb_compare_s_table_gives_costs_under_their_tps_line() -> None:
    from pgbench_kb.analyze.render import render_table

    a = _group("a", 1000, [500 * s for s in NOISE], [0.0] * 5)
    b = _group("b", 1010, [1000 * s for s in NOISE], [0.03] * 5,
               **{"postgres.settings.checkpoint_timeout": "30s"})  # fmt: skip
    text = render_table(_known(a, b))
    assert "; 0 latency comparison(s) and 2 per-transaction cost comparison(s) under" in text
    lines = text.splitlines()
    wal = next(x for x in lines if x.strip().startswith("wal_bytes_per_txn"))
    fpi = next(x for x in lines if x.strip().startswith("wal_fpi_per_txn"))
    assert wal.split()[-3:] == ["+100.0%", "higher:", "worse"], wal
    assert fpi.split()[-3:] == ["—", "higher:", "worse"], fpi  # 0 → 0.03: no percentage
