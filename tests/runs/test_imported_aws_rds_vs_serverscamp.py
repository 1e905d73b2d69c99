"""The imported ServersCamp set (data/imports/aws-rds-vs-serverscamp): MIT-licensed, so every
output is kept. Each run's figures are re-read from the kept raw copy by the real parser, the
copy is the one its hash names, and the set reproduces the per-run table the publisher printed
beside the outputs (results/*/benchN.md at the pinned commit: TPS to two decimals, latency in
ms, transactions)."""

from __future__ import annotations

import hashlib
import re

import pytest
import yaml

from kbtest import REPO, imported_set_runs
from pgbench_kb.analyze.load import bench_session
from pgbench_kb.parse import parse_paths

SET = "aws-rds-vs-serverscamp"
MAPPING = REPO / "data" / "imports" / SET / "mapping.yaml"
#: The publisher's own per-run table (results/<archive>/bench<scale>.md, "Per-run summary"):
#: (archive, scale, repeat) -> (transactions, TPS as printed, latency average in ms).
PUBLISHED = {
    ("aws", 100, 1): (2385331, "3976.44", 8.047),
    ("aws", 100, 2): (2380108, "3967.67", 8.065),
    ("aws", 100, 3): (2411845, "4020.64", 7.959),
    ("aws", 1000, 1): (1546357, "2577.80", 12.414),
    ("aws", 1000, 2): (1656687, "2761.72", 11.587),
    ("aws", 1000, 3): (1729727, "2883.51", 11.098),
    ("aws", 10000, 1): (2635327, "2196.37", 14.569),
    ("aws", 10000, 2): (2730410, "2275.58", 14.062),
    ("aws", 10000, 3): (2807282, "2339.69", 13.677),
    ("serverscamp-test1", 100, 1): (2227578, "3713.25", 8.618),
    ("serverscamp-test1", 100, 2): (2237000, "3729.28", 8.581),
    ("serverscamp-test1", 100, 3): (2268873, "3782.45", 8.460),
    ("serverscamp-test1", 1000, 1): (1236180, "2060.84", 15.528),
    ("serverscamp-test1", 1000, 2): (1358697, "2265.01", 14.128),
    ("serverscamp-test1", 1000, 3): (1467869, "2447.14", 13.077),
    ("serverscamp-test1", 10000, 1): (2275836, "1896.81", 16.870),
    ("serverscamp-test1", 10000, 2): (2347724, "1956.72", 16.354),
    ("serverscamp-test1", 10000, 3): (2379336, "1983.08", 16.137),
    ("serverscamp-test2", 100, 1): (2246325, "3744.75", 8.545),
    ("serverscamp-test2", 100, 2): (2199119, "3665.94", 8.729),
    ("serverscamp-test2", 100, 3): (2254345, "3758.20", 8.515),
    ("serverscamp-test2", 1000, 1): (1609756, "2683.57", 11.924),
    ("serverscamp-test2", 1000, 2): (1690231, "2817.91", 11.356),
    ("serverscamp-test2", 1000, 3): (1730230, "2884.13", 11.095),
    ("serverscamp-test2", 10000, 1): (2891621, "2409.97", 13.278),
    ("serverscamp-test2", 10000, 2): (2977209, "2481.38", 12.896),
    ("serverscamp-test2", 10000, 3): (3073180, "2561.34", 12.493),
}


RUNS = imported_set_runs(SET)
MAP = yaml.safe_load(MAPPING.read_text(encoding="utf-8"))


def test_the_whole_set_is_imported_once() -> None:
    assert len(RUNS) == len(PUBLISHED) == 27
    keys = set()
    pattern = re.compile(MAP["files"]["pattern"])
    for run in RUNS:
        found = pattern.fullmatch(run["provenance"]["source"]["locator"])
        assert found is not None
        keys.add((found["archive"], int(found["scale"]), run["repeat"]["index"]))
    assert keys == set(PUBLISHED)


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run["provenance"]["source"]["locator"])
def test_every_figure_is_the_kept_output_and_the_publishers_table(run: dict) -> None:
    (kept,) = run["raw"]
    raw = REPO / kept["path"]
    assert hashlib.sha256(raw.read_bytes()).hexdigest() == kept["sha256"]
    assert run["id"].endswith(kept["sha256"][:8])
    parsed = parse_paths([raw])
    results, bench = run["results"], run["benchmark"]
    assert results["tps"] == parsed["tps"]
    assert results["transactions_processed"] == parsed["transactions_processed"]
    assert results["latency_avg_ms"] == parsed["latency_avg_ms"]
    assert results["failed_transactions"] == parsed["failed_transactions"] == 0
    assert results["initial_connection_time_ms"] == parsed["initial_connection_time_ms"]
    for key in ("scale", "clients", "threads", "query_mode", "duration_s"):
        assert bench[key] == parsed[key], key
    assert (bench["clients"], bench["threads"], bench["query_mode"]) == (32, 4, "prepared")
    assert run["postgres"]["version"] == parsed["pgbench_version"] == "18.3"
    # What the publisher printed beside the archives, to its own rounding.
    found = re.compile(MAP["files"]["pattern"]).fullmatch(run["provenance"]["source"]["locator"])
    assert found is not None
    transactions, tps, latency = PUBLISHED[
        (found["archive"], bench["scale"], run["repeat"]["index"])
    ]
    assert results["transactions_processed"] == transactions
    assert f"{results['tps']:.2f}" == tps
    assert results["latency_avg_ms"] == latency
    assert bench["duration_s"] == (1200 if bench["scale"] == 10000 else 600)


@pytest.mark.parametrize("run", RUNS, ids=lambda run: run["provenance"]["source"]["locator"])
def test_provenance_sessions_and_machines_follow_the_mapping(run: dict) -> None:
    source = run["provenance"]["source"]
    found = re.compile(MAP["files"]["pattern"]).fullmatch(source["locator"])
    assert found is not None
    assert source["revision"] == MAP["source"]["revision"]
    assert source["url"] == (
        f"{MAP['source']['url']}/blob/{MAP['source']['revision']}/raw-logs/{found['archive']}.tar"
    )
    assert "MIT" in source["terms"]
    assert (REPO / "data" / "imports" / SET / "LICENSE").read_text().startswith("MIT License")
    # Each runbook run is its own session, started when the mapping says.
    started = MAP["files"]["started"][found["session"]].replace("-", "T")
    assert bench_session(run["repeat"]).startswith(f"{started}-")
    machine = "aws-rds-db-m6i-large" if found["archive"] == "aws" else "serverscamp-db-m-8g"
    assert run["machine"] == machine
    assert (REPO / "content" / "hardware" / f"{machine}.md").is_file()
    volume = run["storage"]["data"]["array"]["disk_model"]
    assert {"aws": "12000 IOPS", "serverscamp-test1": "5000 IOPS"}.get(
        found["archive"], "12000 IOPS"
    ) in volume
    # Nothing was tuned and nothing is listed: unknown, and said so.
    assert run["postgres"]["settings"] is None
    assert "settings" in run["provenance"]["notes"]
    assert run["client"]["same_as_server"] is False and run["client"]["ssl"] is True
