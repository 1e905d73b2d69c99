"""The imported result trees' own figures as checked claims (issue 32, data/claims.yaml part J):
kernel-bench's summary file, ServersCamp's per-run tables and the archaeology series' OLTP
improvement since 8.0. Each compares groups measured in different bench sessions: the claim is
checked against exactly the groups it names, kb compare gives the underlying comparison no
verdict, and the claim's text says the sides were measured apart."""

from __future__ import annotations

import pytest

KERNEL_SUMMARY = "kernel-bench (Tomas Vondra's result repository, its summary e5-4620/results.csv)"
SERVERSCAMP = "pgbench: AWS RDS vs ServersCamp managed PostgreSQL - raw data & methodology"
AWS_GP3 = "AWS gp3, 500 GiB, 12000 IOPS, 500 MiB/s"
SCAMP_5K = "ServersCamp SDS volume, 500 GB, 5000 IOPS, 225 MB/s"
SCAMP_12K = "ServersCamp SDS volume, 500 GB, 12000 IOPS, 500 MB/s"


@pytest.fixture(scope="module")
def claims(shipped_knowledge) -> dict[str, dict]:
    return {c["id"]: c for c in shipped_knowledge["claims"]}


@pytest.fixture(scope="module")
def groups(shipped_knowledge) -> dict[str, dict]:
    return {g["id"]: g for g in shipped_knowledge["groups"]}


def _sides(claim: dict, groups: dict[str, dict]) -> list[tuple[dict, dict]]:
    return [(groups[a], groups[b]) for a, b in (x["groups"] for x in claim["checks"])]


def _figures(claim: dict) -> list[tuple[str, list[float]]]:
    return [(x["metric"], x["values"]) for x in claim["checks"]]


def _measured_apart(ga: dict, gb: dict) -> bool:
    return ga["session"] != gb["session"] and ga["session"].startswith("bench ")


@pytest.mark.parametrize(
    ("cid", "where", "values"),
    [
        (
            "kernel-4-5-doubles-3-2-single-client-reads",
            {
                "benchmark.workload.name": "select-only",
                "benchmark.scale": 30,
                "benchmark.clients": 1,
            },
            [5013.232716, 10487.632719],
        ),
        (
            "kernel-4-5-behind-3-2-on-writes-at-scale-2500",
            {
                "benchmark.workload.name": "tpcb-like",
                "benchmark.scale": 2500,
                "benchmark.clients": 64,
            },
            [11876.891029, 7885.497415],
        ),
    ],
)
def test_kernel_bench_summary_cells_are_checked_on_their_two_kernels(
    claims, groups, cid, where, values
):
    claim = claims[cid]
    assert claim["source"] == KERNEL_SUMMARY and claim["verdict"] == "holds"
    assert _figures(claim) == [("tps", values)]
    [(ga, gb)] = _sides(claim, groups)
    assert ga["factors"]["server.os.kernel"] == "3.2.80"
    assert gb["factors"]["server.os.kernel"] == "4.5.5"
    for g in (ga, gb):
        assert g["machine"] == "xeon-e5-4620-4s" and g["n"] == 3
        assert {f: g["factors"][f] for f in where} == where
    assert _measured_apart(ga, gb)
    assert "measured apart" in claim["text"] and "no verdict" in claim["text"]


def test_kb_compare_gives_the_kernel_steps_no_verdict(shipped_knowledge, claims):
    """The comparison under the first kernel claim: shown, never judged across two boots."""
    pair = set(claims["kernel-4-5-doubles-3-2-single-client-reads"]["checks"][0]["groups"])
    [c] = [
        c
        for c in shipped_knowledge["comparisons"]
        if c["kind"] == "pair"
        and c["metric"] == "tps"
        and {c["a"]["group"], c["b"]["group"]} == pair
    ]
    assert c["factor"] == "server.os.kernel" and c["verdict"] == "not_comparable"
    assert c["sessions"]["shared"] is False and round(c["change_pct"], 1) == 109.2


@pytest.mark.parametrize(
    ("cid", "scale", "disks", "tps", "latency"),
    [
        (
            "serverscamp-matched-storage-ahead-when-disk-bound",
            10000,
            (AWS_GP3, SCAMP_12K),
            [2275.582727, 2481.38297],
            [14.062, 12.896],
        ),
        (
            "aws-rds-ahead-in-cache",
            100,
            (AWS_GP3, SCAMP_12K),
            [3976.442323, 3744.748138],
            [8.047, 8.545],
        ),
        (
            "serverscamp-storage-uplift-when-disk-bound",
            10000,
            (SCAMP_5K, SCAMP_12K),
            [1956.721066, 2481.38297],
            [16.354, 12.896],
        ),
    ],
)
def test_serverscamp_tables_are_checked_on_their_groups(
    claims, groups, cid, scale, disks, tps, latency
):
    claim = claims[cid]
    assert claim["source"] == SERVERSCAMP and claim["verdict"] == "holds"
    assert _figures(claim) == [("tps", tps), ("latency_avg_ms", latency)]
    for ga, gb in _sides(claim, groups):
        assert (ga["factors"]["benchmark.scale"], gb["factors"]["benchmark.scale"]) == (scale,) * 2
        assert (
            ga["factors"]["storage.data.array.disk_model"],
            gb["factors"]["storage.data.array.disk_model"],
        ) == disks
        assert ga["n"] == gb["n"] == 3 and _measured_apart(ga, gb)
    assert "measured apart" in claim["text"]


def test_a_published_figure_outside_its_runs_would_not_hold(shipped_knowledge, groups):
    """The figures check can fail: ServersCamp's uplift claim with its two sides swapped."""
    import copy

    from pgbench_kb.analyze.claims import check_claim

    claim = copy.deepcopy(
        next(
            c
            for c in shipped_knowledge["claims"]
            if c["id"] == "serverscamp-storage-uplift-when-disk-bound"
        )
    )
    for fig in claim["expects"]["figures"]:
        fig["a"], fig["b"] = fig["b"], fig["a"]
    checked = check_claim(claim, groups, shipped_knowledge["comparisons"])
    assert checked["verdict"] == "not supported by its own figures"


def test_the_archaeology_oltp_improvement_holds_at_every_client_count_and_mode(claims, groups):
    claim = claims["archaeology-oltp-faster-than-8-0"]
    assert claim["verdict"] == "holds"
    sides = _sides(claim, groups)
    cells = {
        (ga["factors"]["benchmark.clients"], ga["factors"]["benchmark.query_mode"])
        for ga, _ in sides
    }
    assert cells == {(c, m) for c in (1, 16, 32, 64, 128, 256) for m in ("simple", "prepared")}
    for ga, gb in sides:
        assert ga["factors"]["postgres.version"] == "8.0.26"
        assert gb["factors"]["postgres.version"] == "18devel"
        assert ga["factors"]["benchmark.clients"] == gb["factors"]["benchmark.clients"]
        assert ga["factors"]["benchmark.query_mode"] == gb["factors"]["benchmark.query_mode"]
        assert _measured_apart(ga, gb)
    changes = sorted(x["change_pct"] for x in claim["checks"])
    assert changes[0] == 11.61 and changes[-1] == 9167.51
    assert "measured apart" in claim["text"]
