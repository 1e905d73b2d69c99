"""The imported kernel-bench set (data/imports/kernel-bench-e5-4620): no licence is stated,
so no output is kept, and no excerpt of one is stored here either. What can be checked
without them is checked: every run names its output by address at the pinned commit and by
sha256, once; every fact the mapping derives from the path (kernel, scale, repeat, clients,
read-only or read-write) is the one the run carries, and agrees with what the parser read
from the output (workload, scale, clients); the figures hang together as pgbench prints them
(tps without connections at least the tps with them, and the processed transactions over
the run's length within 1% of the tps); and each kernel's session starts when its bench.log
says."""

from __future__ import annotations

import re

import pytest
import yaml

from kbtest import REPO, imported_set_runs
from pgbench_kb.analyze.load import bench_session

SET = "kernel-bench-e5-4620"
MAPPING = REPO / "data" / "imports" / SET / "mapping.yaml"
MAP = yaml.safe_load(MAPPING.read_text(encoding="utf-8"))
PATTERN = re.compile(MAP["files"]["pattern"])
KERNELS = ("3.2.80", "3.10.101", "4.5.5")
SCALES = (30, 2500, 35000)
CLIENTS = (1, 16, 32, 64)


RUNS = imported_set_runs(SET)


def test_every_output_of_the_machine_is_imported_once() -> None:
    seen = {}
    for run in RUNS:
        found = PATTERN.fullmatch(run["provenance"]["source"]["locator"])
        assert found is not None, run["id"]
        key = (found["kernel"], int(found["scale"]), int(found["repeat"]), found["kind"])
        seen.setdefault(key, []).append(int(found["clients"]))
    # 3 kernels x 3 scales x 3 repeats x (read-only, read-write) x 4 client counts.
    assert len(RUNS) == 216
    assert sorted(seen) == sorted(
        (k, s, r, kind)
        for k in KERNELS
        for s in SCALES
        for r in (1, 2, 3)
        for kind in ("only", "write")
    )
    assert all(sorted(clients) == list(CLIENTS) for clients in seen.values())
    hashes = [run["provenance"]["source"]["sha256"] for run in RUNS]
    assert len(set(hashes)) == len(hashes)


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run["provenance"]["source"]["locator"])
def test_each_run_is_its_output_by_address_and_hash(run: dict) -> None:
    source = run["provenance"]["source"]
    found = PATTERN.fullmatch(source["locator"])
    assert found is not None
    # Referenced, not kept: the address at the pinned commit and the output's sha256.
    assert run["raw"] == []
    assert re.fullmatch(r"[0-9a-f]{64}", source["sha256"])
    assert run["id"].endswith(source["sha256"][:8])
    assert source["revision"] == MAP["source"]["revision"]
    assert source["url"] == (
        f"{MAP['source']['url']}/blob/{MAP['source']['revision']}/{source['locator']}"
    )
    assert "No licence" in source["terms"]
    # What the path says is what the run carries, and what the parser read agrees with it.
    bench = run["benchmark"]
    assert run["server"]["os"]["kernel"] == found["kernel"]
    assert bench["scale"] == int(found["scale"])
    assert bench["clients"] == int(found["clients"])
    assert run["repeat"]["index"] == int(found["repeat"])
    assert run["repeat"]["of"] == 3
    read_only = found["kind"] == "only"
    assert bench["workload"]["name"] == ("select-only" if read_only else "tpcb-like")
    assert bench["duration_s"] == (900 if read_only else 1800)
    assert bench["command"] == (
        f"pgbench -S -c {found['clients']} -T 900 pgbench"
        if read_only
        else f"pgbench -c {found['clients']} -T 1800 pgbench"
    )
    assert (bench["threads"], bench["query_mode"]) == (1, "simple")
    # The figures hang together as pgbench computes them.
    results = run["results"]
    assert results["tps_including_connections"] <= results["tps"]
    rate = results["transactions_processed"] / bench["duration_s"]
    assert rate == pytest.approx(results["tps"], rel=0.01)
    assert results["latency_avg_ms"] > 0
    # One session per kernel, started when its bench.log says.
    started = MAP["files"]["started"][found["session"]].replace("-", "T")
    assert bench_session(run["repeat"]).startswith(f"{started}-")
    assert run["machine"] == "xeon-e5-4620-4s"
    assert run["postgres"]["version"] == "9.6beta1"
    assert run["postgres"]["settings"]["shared_buffers"] == "16GB"
    assert run["client"]["same_as_server"] is True
