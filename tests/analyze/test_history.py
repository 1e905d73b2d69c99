"""kb compare on the shipped historical runs reproduces every pgbench comparison the sources
draw, with their numbers (docs/comparisons.md; the figures are those of the five write-ups).

The runs are found by their source locator, not by id, so a corrected fact in a run file
changes what is checked only where the fact itself changed. The full output is also compared
with golden files (regenerate with ``KB_UPDATE_GOLDENS=1`` after an intended change).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from kbtest import assert_golden, run_kb, shipped_root
from pgbench_kb.analyze import build_knowledge
from pgbench_kb.analyze.render import render_table

GOLDEN = Path(__file__).parent / "golden"


def _transcribed() -> list[tuple[Path, dict]]:
    """The shipped transcribed run files (path, data): the history the sources wrote, not
    whatever measured runs are merged later. Read when a fixture first asks, never at import."""
    found = []
    for path in sorted((shipped_root() / "data" / "runs").rglob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        if "\norigin: transcribed\n" in text:
            found.append((path, yaml.load(text, Loader=yaml.CSafeLoader)))
    return found


@pytest.fixture(scope="module")
def transcribed() -> list[tuple[Path, dict]]:
    runs = _transcribed()
    assert all(run["origin"] == "transcribed" for _path, run in runs) and len(runs) >= 20
    return runs


@pytest.fixture(scope="module")
def history_root(tmp_path_factory: pytest.TempPathFactory, transcribed) -> Path:
    """A root holding the shipped transcribed runs only (and the claims)."""
    root = tmp_path_factory.mktemp("history")
    for path, _run in transcribed:
        target = root / path.relative_to(shipped_root())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    shutil.copy2(shipped_root() / "data" / "claims.yaml", root / "data" / "claims.yaml")
    return root


@pytest.fixture(scope="module")
def knowledge(history_root: Path) -> dict:
    return build_knowledge(history_root)


@pytest.fixture(scope="module")
def runs_by_locator(transcribed) -> dict[str, dict]:
    """Source locator (e.g. 'results table, row 5') → run data."""
    return {
        (run["provenance"].get("source") or {}).get("locator") or run["id"]: run
        for _path, run in transcribed
    }


@pytest.fixture(scope="module")
def by_locator(runs_by_locator) -> dict[str, str]:
    """Source locator → run id."""
    return {locator: run["id"] for locator, run in runs_by_locator.items()}


def find(knowledge: dict, run_a: str, run_b: str) -> tuple[dict, float, dict, dict]:
    """The comparison between the groups holding two runs, its ratio oriented as B/A for the
    runs as given, and the two sides in that order."""
    for c in knowledge["comparisons"]:
        if run_a in c["a"]["runs"] and run_b in c["b"]["runs"]:
            return c, c["ratio"], c["a"], c["b"]
        if run_b in c["a"]["runs"] and run_a in c["b"]["runs"]:
            return c, 1 / c["ratio"], c["b"], c["a"]
    raise AssertionError(f"no comparison between {run_a} and {run_b}")


W = "results table, row {}"
S = "TPC-B table, row {}, {}"
F = "follow-up table (100 clients, TPC-B, no software RAID), row {}"

# (what the source compares, run A, run B, a field the factor names, B/A from the sources'
#  figures, caveat fields that must be listed)
SOURCE_COMPARISONS = [
    (
        "RAID1+0 vs RAID5, 4× 10k",
        W.format(1),
        W.format(5),
        "storage.data.array.level",
        216.606298 / 124.885813,
        ["benchmark.transactions_per_client"],
    ),
    (
        "RAID1+0 vs RAID5, 4× 15k",
        W.format(8),
        W.format(7),
        "storage.data.array.level",
        285.127666 / 189.379783,
        [],
    ),
    (
        "RAID1+0 vs RAID5 with WAL on its own RAID1",
        W.format(11),
        W.format(10),
        "storage.data.array.level",
        341.404543 / 212.615105,
        [],
    ),
    (
        "four 10k spindles: RAID1 pair + WAL RAID1 pair vs RAID1+0",
        W.format(6),
        W.format(5),
        "storage.wal.placement",
        216.606298 / 131.309052,
        [],
    ),
    (
        "four 10k spindles: RAID5 vs RAID1 pair + WAL RAID1 pair",
        W.format(1),
        W.format(6),
        "storage.wal.placement",
        131.309052 / 124.885813,
        ["benchmark.transactions_per_client"],
    ),
    (
        "four 15k spindles: RAID1 pair + WAL RAID1 pair vs RAID1+0",
        W.format(9),
        W.format(7),
        "storage.wal.placement",
        285.127666 / 171.680858,
        [],
    ),
    (
        "four 15k spindles: RAID1 pair + WAL RAID1 pair vs RAID5",
        W.format(9),
        W.format(8),
        "storage.wal.placement",
        189.379783 / 171.680858,
        [],
    ),
    (
        "battery-backed cache, commit_delay on",
        W.format(3),
        W.format(1),
        "storage.controller.write_cache",
        124.885813 / 115.020971,
        [],
    ),
    (
        "battery-backed cache, commit_delay off",
        W.format(4),
        W.format(2),
        "storage.controller.write_cache",
        129.517978 / 80.244181,
        [],
    ),
    (
        "commit_delay with the cache",
        W.format(2),
        W.format(1),
        "postgres.settings.commit_delay",
        124.885813 / 129.517978,
        [],
    ),
    (
        "commit_delay without the cache",
        W.format(4),
        W.format(3),
        "postgres.settings.commit_delay",
        115.020971 / 80.244181,
        [],
    ),
    (
        "disk speed, RAID1+0",
        W.format(5),
        W.format(7),
        "storage.data.array.rpm",
        285.127666 / 216.606298,
        [],
    ),
    (
        "disk speed, RAID5",
        W.format(1),
        W.format(8),
        "storage.data.array.rpm",
        189.379783 / 124.885813,
        ["benchmark.transactions_per_client"],
    ),
    (
        "disk speed, RAID1 + WAL RAID1",
        W.format(6),
        W.format(9),
        "storage.wal.array.rpm",
        171.680858 / 131.309052,
        [],
    ),
    (
        "WAL on its own RAID1, RAID1+0 data",
        W.format(7),
        W.format(10),
        "storage.wal.placement",
        341.404543 / 285.127666,
        [],
    ),
    (
        "WAL on its own RAID1, RAID5 data",
        W.format(8),
        W.format(11),
        "storage.wal.placement",
        212.615105 / 189.379783,
        [],
    ),
    # 2010: each tuning step on each version, then every step at once
    *[
        (f"step {n} → {n + 1} on {v}", S.format(n, v), S.format(n + 1, v), field, ratio, [])
        for v, avgs in (
            ("8.2.14", (409, 853, 1667, 2372, 2323, 2792)),
            ("8.4.2", (462, 981, 1562, 2332, 2350, 2809)),
        )
        for n, field in zip(
            range(1, 6),
            (
                "postgres.settings.checkpoint_segments",
                "storage.wal.placement",
                "postgres.settings.shared_buffers",
                "postgres.settings.shared_buffers",
                "postgres.settings.fsync",
            ),
            strict=True,
        )
        for ratio in [avgs[n] / avgs[n - 1]]
    ],
    (
        "every step at once, 8.2.14",
        S.format(1, "8.2.14"),
        S.format(6, "8.2.14"),
        "storage.wal.placement",
        2792 / 409,
        [],
    ),
    (
        "every step at once, 8.4.2",
        S.format(1, "8.4.2"),
        S.format(6, "8.4.2"),
        "storage.wal.placement",
        2809 / 462,
        [],
    ),
    *[
        (
            f"8.4.2 vs 8.2.14, row {n}",
            S.format(n, "8.2.14"),
            S.format(n, "8.4.2"),
            "postgres.version",
            b / a,
            [],
        )
        for n, a, b in (
            (1, 409, 462),
            (2, 853, 981),
            (3, 1667, 1562),
            (4, 2372, 2332),
            (5, 2323, 2350),
            (6, 2792, 2809),
        )
    ],
    (
        "FreeBSD UFS vs ZFS",
        F.format("1: FreeBSD 11.1 + UFS"),
        F.format("2: FreeBSD 11.1 + ZFS"),
        "storage.data.filesystem",
        8331.85 / 5623.86,
        [],
    ),
    (
        "FreeBSD UFS vs CentOS ext4",
        F.format("1: FreeBSD 11.1 + UFS"),
        F.format("3: CentOS 7.4 + ext4"),
        "server.os.name",
        8987.65 / 5623.86,
        [],
    ),
    (
        "FreeBSD ZFS vs CentOS ext4",
        F.format("2: FreeBSD 11.1 + ZFS"),
        F.format("3: CentOS 7.4 + ext4"),
        "server.os.name",
        8987.65 / 8331.85,
        [],
    ),
    (
        "the talk's patched vs unpatched run",
        "worked A/B example, master column",
        "worked A/B example, patched column",
        "postgres.build.patches",
        0.231663 / 0.199382,
        [],
    ),
]


@pytest.mark.parametrize(
    ("what", "loc_a", "loc_b", "field", "ratio", "caveats"),
    SOURCE_COMPARISONS,
    ids=[c[0] for c in SOURCE_COMPARISONS],
)
def test_every_source_comparison_is_reproduced(
    knowledge, by_locator, runs_by_locator, what, loc_a, loc_b, field, ratio, caveats
):
    c, got, _a, _b = find(knowledge, by_locator[loc_a], by_locator[loc_b])
    assert field in c["factor"].split("+"), (what, c["factor"])
    assert got == pytest.approx(ratio, rel=2e-4), what
    assert c["change_pct"] == pytest.approx((c["ratio"] - 1) * 100, abs=0.006)

    # A field a run file marks uncertain, on one side only, is a caveat too (follows the data).
    def uncertain(locator: str) -> list:
        return runs_by_locator[locator]["provenance"].get("uncertain") or []

    if uncertain(loc_a) != uncertain(loc_b):
        caveats = sorted([*caveats, "provenance.uncertain"])
    assert [d["field"] for d in c["differs_also"]] == caveats, what


def test_the_t500_confound_is_listed_with_both_values(knowledge, by_locator):
    c, *_ = find(knowledge, by_locator[W.format(1)], by_locator[W.format(5)])
    values = {(d["a"], d["b"]) for d in c["differs_also"]}
    assert values in ({(500, 1000)}, {(1000, 500)})
    finding = next(f for f in knowledge["findings"] if c["id"] in f["comparisons"])
    assert "Caveat: transactions per client (-t) also differs (500 vs 1000)" in finding["text"]


def test_spread_is_unknown_for_medians_without_runs_and_known_for_listed_runs(knowledge):
    wiki = [g for g in knowledge["groups"] if g["machine"] == "hp-proliant-dl380-g4"]
    assert wiki and all(g["spread"] is None and g["statistic"] == "median" for g in wiki)
    assert all(g["n"] == 5 for g in wiki)
    study = [g for g in knowledge["groups"] if g["machine"] == "e4600-2x160gb-sata"]
    tpcb = [g for g in study if g["factors"]["benchmark.workload.name"] == "tpcb-like"]
    assert len(tpcb) == 12
    assert all(g["spread"] and g["n"] == 3 and g["statistic"] == "mean" for g in tpcb)
    # its TPC-C table (issue 31): one figure per cell, how many runs behind it not said
    tpcc = [g for g in study if g not in tpcb]
    assert len(tpcc) == 12 and all(g["spread"] is None and g["n"] == 1 for g in tpcc)
    wiki_ids = {g["id"] for g in wiki}
    for c in knowledge["comparisons"]:
        if c["a"]["group"] in wiki_ids:
            assert c["verdict"] == "spread_unknown"


def test_verdicts_follow_the_repeats_of_the_2010_study(knowledge, by_locator):
    def verdict(a: str, b: str) -> str:
        return find(knowledge, by_locator[a], by_locator[b])[0]["verdict"]

    # WAL on the second disk: outside the noise on both versions.
    assert verdict(S.format(2, "8.2.14"), S.format(3, "8.2.14")) == "higher"
    assert verdict(S.format(2, "8.4.2"), S.format(3, "8.4.2")) == "higher"
    # Memory settings: +42.3% is outside the noise on 8.2.14; on 8.4.2 the unstable row 3
    # (1364, 1945, 1378) leaves +49.3% within it.
    assert verdict(S.format(3, "8.2.14"), S.format(4, "8.2.14")) == "higher"
    assert verdict(S.format(3, "8.4.2"), S.format(4, "8.4.2")) == "within_noise"
    # No further gain from step 5 on either version.
    assert verdict(S.format(4, "8.2.14"), S.format(5, "8.2.14")) == "within_noise"
    assert verdict(S.format(4, "8.4.2"), S.format(5, "8.4.2")) == "within_noise"


def test_commit_delay_and_the_battery_backed_cache_interact(knowledge, by_locator):
    rows = {by_locator[W.format(n)] for n in (1, 2, 3, 4)}
    found = [i for i in knowledge["interactions"] if {c["group"] for c in i["cells"]} == rows]
    assert len(found) == 1
    i = found[0]
    assert i["factor"] == "postgres.settings.commit_delay"
    assert i["with"] == "storage.controller.write_cache"
    assert i["kind"] == "sign" and i["verdict"] == "spread_unknown"
    assert sorted(c["center"] for c in i["cells"]) == [
        80.244181,
        115.020971,
        124.885813,
        129.517978,
    ]
    assert sorted(e["change_pct"] for e in i["effects"]) == [-3.58, 43.34]
    for figure in ("129.5", "124.9", "80.24", "115"):
        assert figure in i["text"]


def test_findings_are_only_for_verdicts_outside_noise_or_marked(knowledge):
    by_id = {c["id"]: c for c in knowledge["comparisons"]}
    for f in knowledge["findings"]:
        if f["kind"] != "comparison":
            continue
        c = by_id[f["comparisons"][0]]
        assert c["verdict"] != "within_noise"
        if c["verdict"] == "spread_unknown":
            assert "noise is unknown" in f["text"]
    noise = [c for c in knowledge["comparisons"] if c["verdict"] == "within_noise"]
    assert noise
    mentioned = {
        i for f in knowledge["findings"] if f["kind"] == "comparison" for i in f["comparisons"]
    }
    assert not {c["id"] for c in noise} & mentioned


def test_json_matches_golden(knowledge):
    assert_golden(
        GOLDEN / "history.json", json.dumps(knowledge, indent=1, ensure_ascii=False) + "\n"
    )


def test_table_matches_golden(knowledge):
    assert_golden(GOLDEN / "history.txt", render_table(knowledge))


def test_cli_prints_the_same_json_and_table(history_root: Path):
    done = run_kb("compare", "--root", str(history_root), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads((GOLDEN / "history.json").read_text())
    done = run_kb("compare", "--root", str(history_root))
    assert done.returncode == 0, done.stderr
    assert done.stdout == (GOLDEN / "history.txt").read_text(encoding="utf-8")
