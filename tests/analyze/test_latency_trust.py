"""Untrustworthy latencies are named (issue #36, item 6): a run whose logged latencies read
0 µs in more than 1% of its logged transactions, or a short run with no log to check, gets no
latency verdict and feeds no finding (runs/latency_zeros.py, analyze/latency_trust.py)."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from kbtest import run_kb, shipped_root
from pgbench_kb.analyze.latency import METRICS as LATENCY_METRICS
from pgbench_kb.parse import parse_text
from pgbench_kb.runs import latency_zeros as rules
from pgbench_kb.runs.check import check_paths
from pgbench_kb.runs.runfile import load_yaml_file


def _zero_shares(root: Path) -> dict[str, float]:
    """Each shipped run with transaction logs → the share of its logged latencies that are 0,
    counted here from the gzip logs line by line (not with the parser under test)."""
    shares = {}
    for path in sorted((root / "data" / "runs").rglob("*.yaml")):
        run = load_yaml_file(path).data
        logs = [r["path"] for r in run.get("raw") or [] if r["kind"] == "transaction_log"]
        zero = logged = 0
        for rel in logs:
            for line in gzip.decompress((root / rel).read_bytes()).decode().splitlines():
                latency = line.split()[2]
                if latency.isdigit():
                    logged += 1
                    zero += latency == "0"
        if logged:
            shares[run["id"]] = zero / logged
    return shares


@pytest.fixture(scope="module")
def shipped(shipped_knowledge: dict[str, Any]) -> dict[str, Any]:
    return shipped_knowledge


@pytest.fixture(scope="module")
def zero_heavy() -> set[str]:
    return {rid for rid, share in _zero_shares(shipped_root()).items() if share > 0.01}


def test_every_shipped_run_with_over_1pct_zeros_is_named(
    shipped: dict[str, Any], zero_heavy: set[str]
) -> None:
    named = {e["run"]: e for e in shipped["latency_trust"] if e["status"] == "unreliable"}
    assert zero_heavy, "the shipped select-only runs with 4 clients have 11-60% zeros"
    assert set(named) == zero_heavy
    one = named[min(named)]
    assert one["zero_latencies"] > 0.01 * one["logged"]
    assert one["reason"].startswith("latencies unreliable: ")
    assert (
        f"of logged transactions ({one['zero_latencies']:,} of {one['logged']:,}) read 0 µs"
        in (one["reason"])
    )
    assert one["reason"].endswith("pgbench read its clock once for start and end")


def test_no_latency_verdict_or_finding_rests_on_a_run_with_over_1pct_zeros(
    shipped: dict[str, Any], zero_heavy: set[str]
) -> None:
    by_id = {c["id"]: c for c in shipped["comparisons"]}
    # per-transaction costs do not rest on latencies: only the latency metrics are checked
    latency = [c for c in shipped["comparisons"] if c.get("metric", "tps") in LATENCY_METRICS]
    assert latency, "the trusted runs still have latency comparisons"
    for c in latency:
        assert not (set(c["a"]["runs"]) | set(c["b"]["runs"])) & zero_heavy, c["id"]
    for f in shipped["findings"]:
        cited = [by_id[cid] for cid in f["comparisons"] if cid in by_id]
        if f["kind"] == "latency" or any(c.get("metric") in LATENCY_METRICS for c in cited):
            for c in cited:
                assert not (set(c["a"]["runs"]) | set(c["b"]["runs"])) & zero_heavy, f["text"]
    for p in shipped["pooled"]:
        if str(p.get("metric", "tps")) in LATENCY_METRICS:
            for cid in p["comparisons"]:
                assert cid in by_id, cid
    noted = [c for c in shipped["comparisons"] if "latency_untrusted" in c]
    assert noted and all(c.get("metric", "tps") == "tps" for c in noted)
    # Beside the zero-heavy runs, the imported archaeology runs of sub-millisecond latency
    # and no log are "unverified" (docs/parser.md, "Zero latencies").
    unverified = {e["run"] for e in shipped["latency_trust"] if e["status"] == "unverified"}
    assert unverified
    for c in noted:
        runs = set(c["latency_untrusted"]["runs"])
        assert runs <= zero_heavy | unverified
        if runs <= zero_heavy:
            assert "read 0 µs" in c["latency_untrusted"]["reason"]
    for g in shipped["groups"]:
        if g["runs"] and set(g["runs"]) <= zero_heavy:
            assert g["latency_avg_ms"] is None, g["id"]
    for curve in shipped["curves"]:
        for point in curve["points"]:
            runs = next(g["runs"] for g in shipped["groups"] if g["id"] == point["group"])
            if set(runs) <= zero_heavy:
                assert (point["latency_ms"], point["p95_ms"], point["p99_ms"]) == (None,) * 3


def test_kb_check_warns_and_keeps_the_run_file(zero_heavy: set[str]) -> None:
    root = shipped_root()
    path = next(p for p in (root / "data" / "runs").rglob("*.yaml") if p.stem in zero_heavy)
    report = check_paths([str(path)], root=root)
    assert report.errors == []
    warned = [f for f in report.warnings if rules.named(f.message)]
    assert len(warned) == 1 and warned[0].field == "results.latency_percentiles_ms"
    assert "no verdict" in warned[0].message


def test_the_parser_counts_latencies_of_0_us() -> None:
    lines = [f"0 {n} {lat} 0 1795305575 {540653 + n}" for n, lat in enumerate([0, 12, 0, 7, 0])]
    parsed = parse_text("\n".join(lines) + "\n")
    assert (parsed["zero_latencies"], parsed["transactions"]) == (3, 5)
    assert parse_text("0 1 5 0 1795305575 540653\n")["zero_latencies"] == 0


@pytest.mark.parametrize(
    ("zero", "logged", "status"),
    [(10, 1000, None), (11, 1000, "unreliable"), (0, 0, None), (1, 2, "unreliable")],
)
def test_the_1pct_rule(zero: int, logged: int, status: str | None) -> None:
    found = rules.from_counts(zero, logged)
    assert (found.status if found else None) == status


RUN = {
    "raw": [{"kind": "output", "path": "x.txt"}],
    "benchmark": {"progress_interval_s": 1.0},
    "results": {"latency_avg_ms": 0.05, "latency_stddev_ms": 0.02},
}


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({}, "unverified"),
        ({"results": {"latency_avg_ms": 0.1, "latency_stddev_ms": 0.02}}, None),
        # Without -P, -R or -L, pgbench computes its average from the run's time.
        ({"benchmark": {}, "results": {"latency_avg_ms": 0.05}}, None),
        ({"raw": [{"kind": "transaction_log", "path": "x.log0.gz"}]}, None),
    ],
)
def test_the_rule_for_short_runs_without_a_log(change: dict[str, Any], status: str | None) -> None:
    found = rules.without_log({**RUN, **change})
    assert (found.status if found else None) == status
    if found:
        assert found.reason.startswith("latencies unverified: 0.05 ms on average")


def test_kb_import_names_the_run_and_writes_it_as_it_is(
    tmp_path: Path, zero_heavy: set[str]
) -> None:
    """kb import of a shipped run's output and logs: a note with the count, share and reason;
    the run file keeps the percentiles the logs give (p50 0 or 1 µs)."""
    source = shipped_root()
    run_path = next(p for p in (source / "data" / "runs").rglob("*.yaml") if p.stem in zero_heavy)
    run = load_yaml_file(run_path).data
    output = next(r["path"] for r in run["raw"] if r["kind"] == "output")
    logs = []
    for index, rel in enumerate(r["path"] for r in run["raw"] if r["kind"] == "transaction_log"):
        logs.append(tmp_path / f"pgbench_log.1.{index}" if index else tmp_path / "pgbench_log.1")
        logs[-1].write_bytes(gzip.decompress((source / rel).read_bytes()))
    root = tmp_path / "kb"
    (root / "content" / "hardware").mkdir(parents=True)
    (root / "content" / "hardware" / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n",
        encoding="utf-8",
    )
    done = run_kb(
        "import", "--root", str(root), str(source / output), "--machine", "box",
        "--set", "provenance.recorded_at=2026-11-27T03:05:42Z", "--set", "postgres.version=18.6",
        "--set", "postgres.settings={}", "--set", "storage.data.filesystem=ext4",
        "--log", *map(str, logs), cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "latencies unreliable" in line]
    assert len(notes) == 1, done.stderr
    assert notes[0].startswith("note: results.latency_percentiles_ms: latencies unreliable: ")
    assert "of logged transactions (" in notes[0] and ") read 0 µs: pgbench read" in notes[0]
    written = load_yaml_file(next((root / "data" / "runs").rglob("*.yaml"))).data
    assert written["results"]["latency_percentiles_ms"] == run["results"]["latency_percentiles_ms"]


def test_the_counts_are_kept_per_log_and_read_again_when_a_log_changes(
    tmp_path: Path, zero_heavy: set[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pgbench_kb.analyze import latency_trust
    from pgbench_kb.analyze.load import load_runs

    source = shipped_root()
    run_path = next(p for p in (source / "data" / "runs").rglob("*.yaml") if p.stem in zero_heavy)
    run = load_yaml_file(run_path).data
    root = tmp_path / "kb"
    for rel in [run_path.relative_to(source).as_posix(), *(r["path"] for r in run["raw"])]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes((source / rel).read_bytes())
    (root / "build" / "cache").mkdir(parents=True)
    [record] = load_runs(root)
    assert record.latency_trust["status"] == "unreliable"
    assert (root / "build" / "cache" / latency_trust.CACHE_NAME).is_file()
    latency_trust._counts.clear()  # a new process: the counts come from the file

    def no_parsing(*_args: Any) -> None:
        raise AssertionError("a log was parsed again")

    monkeypatch.setattr(latency_trust, "parse_raw", no_parsing)
    [again] = load_runs(root)
    assert again.latency_trust == record.latency_trust
    monkeypatch.undo()
    logs = [r["path"] for r in run["raw"] if r["kind"] == "transaction_log"]
    for rel in logs:  # the same logs with every latency of 0 µs made 5 µs
        lines = gzip.decompress((root / rel).read_bytes()).decode().splitlines()
        fixed = [
            " ".join(f if i != 2 or f != "0" else "5" for i, f in enumerate(x.split()))
            for x in lines
        ]
        (root / rel).write_bytes(gzip.compress(("\n".join(fixed) + "\n").encode()))
    [changed] = load_runs(root)
    assert changed.latency_trust is None


def test_the_table_says_which_latencies_are_not_judged(shipped: dict[str, Any]) -> None:
    from pgbench_kb.analyze.render import render_table

    table = render_table(shipped)
    head = table.splitlines()[0]
    assert f"latencies of {len(shipped['latency_trust'])} run(s) not judged" in head
    noted = sum(1 for c in shipped["comparisons"] if "latency_untrusted" in c)
    assert table.count("      latency not judged: latencies ") == noted
    unreliable = sum(
        1
        for c in shipped["comparisons"]
        if (c.get("latency_untrusted") or {}).get("reason", "").startswith("latencies unreliable")
    )
    assert (
        unreliable and table.count("      latency not judged: latencies unreliable") == unreliable
    )
