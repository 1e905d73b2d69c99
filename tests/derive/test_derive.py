"""kb derive: the generated pages against golden files, and the small describers one by one.

Regenerate the goldens after an intended change with ``KB_UPDATE_GOLDENS=1`` and read the diff.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from kbtest import assert_golden
from pgbench_kb.derive import charts
from pgbench_kb.derive import checkpoints as marks
from pgbench_kb.derive.run_view import (
    describe_percentile_source,
    major_version,
    ordered_percentiles,
    split_settings,
)
from pgbench_kb.derive.setup_text import (
    describe_array,
    describe_controller,
    distinguishing,
    short_storage,
)
from pgbench_kb.derive.site import derive_site
from pgbench_kb.derive.writer import hugo_date
from pgbench_kb.errors import DeriveError
from pgbench_kb.runs.setting_words import default_words, value_words

FIXTURES = Path(__file__).parent / "fixtures"
RUN_FIXTURES = sorted(FIXTURES.glob("*.yaml"))


def fixture_root(tmp_path: Path) -> Path:
    """A project root holding the fixture run files and the raw outputs they name."""
    root = tmp_path / "root"
    runs = root / "data" / "runs"
    runs.mkdir(parents=True)
    for fixture in RUN_FIXTURES:
        shutil.copy(fixture, runs / fixture.name)
    for raw in (FIXTURES / "raw").iterdir():
        year, month = raw.name[:4], raw.name[4:6] if raw.name[4:6] != "-t" else "00"
        target = root / "data" / "raw" / year / month / raw.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(raw, target)
    return root


@pytest.fixture(scope="module")
def derived(tmp_path_factory) -> Path:
    root = fixture_root(tmp_path_factory.mktemp("derive"))
    derive_site(root=root)
    return root / "build" / "site"


@pytest.mark.parametrize("fixture", RUN_FIXTURES, ids=lambda p: p.stem)
def test_run_page_matches_golden(fixture: Path, derived: Path):
    run_id = next(
        line.split(":", 1)[1].strip()
        for line in fixture.read_text(encoding="utf-8").splitlines()
        if line.startswith("id:")
    )
    page = (derived / "content" / "runs" / f"{run_id}.md").read_text(encoding="utf-8")
    # Written compact (fast for 10,000 pages); compared pretty-printed, so a diff is readable.
    page = json.dumps(json.loads(page), ensure_ascii=False, indent=1) + "\n"
    golden = fixture.with_suffix(".page.md")
    assert_golden(golden, page)


def test_run_page_shows_the_raw_output_and_what_was_declared(derived: Path):
    page = (
        derived / "content" / "runs" / "200606-hp-proliant-dl380-g4-tpcb-like-s600-c100-054e6db2.md"
    ).read_text(encoding="utf-8")
    front = json.loads(page)
    raw = front["params"]["raw"]
    assert raw["path"].endswith("054e6db2.txt") and "tps = " in raw["text"]
    facts = {row["field"]: row for s in front["params"]["facts"] for row in s["rows"]}
    assert facts["benchmark.command"]["how"] == "declared"
    assert facts["benchmark.clients"]["value"] == "100"
    assert front["params"]["run"]["tps_shown"] == "285.1"


def test_progress_chart_is_placed_in_the_page_with_its_data(derived: Path):
    """The -P line is drawn into the run's page (one file fewer per run; no chart file)."""
    page = json.loads(
        (
            derived / "content" / "runs" / "20261122T101500Z-ci-box-tpcb-like-s2-c4-1f3a9c2e.md"
        ).read_text()
    )
    progress = page["params"]["progress"]
    assert progress["rows"][0] == {"t": "1", "tps": "4,217", "latency": "0.944", "checkpoint": "—"}
    assert "src" not in progress
    svg = progress["svg"]
    assert svg.startswith("<svg") and "<polyline" in svg
    # The run records a checkpoint from 2.42 s to 4.87 s: the intervals ending at 3, 4 and 5 s
    # ran beside it, and it is shaded in both panels with a dashed line at its start.
    assert progress["checkpoints"] is True
    assert [row["checkpoint"] for row in progress["rows"]] == [
        "—", "—", "by WAL volume", "by WAL volume", "by WAL volume", "—",
    ]  # fmt: skip
    assert svg.count(f'fill="{charts.CHECKPOINT_FILL}"/>') == 2
    assert svg.count('stroke-dasharray="3 2"') == 2
    assert "(checkpoints shaded)" in svg
    assert progress["description"].endswith(
        "1 checkpoint ran during the run, shaded on the chart (the server's log): by WAL volume "
        "at 2.4 s (took 2.5 s, wrote 310 buffers)."
    )
    assert "http" not in svg.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert page["params"]["statements"] == []
    counters = {c["label"]: c["value"] for c in page["params"]["counters"]}
    assert counters["WAL written"] == "12.3 MB"


def derived_files(folder: Path) -> list[Path]:
    # The manifest records file times (bookkeeping for the next run; Hugo never reads it).
    return sorted(
        p.relative_to(folder)
        for p in folder.rglob("*")
        if p.is_file() and p.name != ".kb-derive-manifest.json"
    )


def assert_same_files(first: Path, second: Path) -> None:
    files = derived_files(first)
    assert files == derived_files(second)
    for relative in files:
        assert (first / relative).read_bytes() == (second / relative).read_bytes(), relative


def test_two_derivations_write_the_same_bytes(tmp_path):
    root = fixture_root(tmp_path)
    first, second = tmp_path / "one", tmp_path / "two"
    derive_site(root=root, out=first)
    derive_site(root=root, out=second)
    assert_same_files(first, second)


def test_pages_written_by_forked_workers_are_those_written_alone(tmp_path, monkeypatch):
    """From PARALLEL_WRITES_FROM deferred files on (run pages, downloads), worker processes
    make and write them: the same bytes, and a later derivation keeps what they wrote."""
    from pgbench_kb.derive import writer

    root = fixture_root(tmp_path)
    alone, forked = tmp_path / "alone", tmp_path / "forked"
    derive_site(root=root, out=alone)
    monkeypatch.setattr(writer, "PARALLEL_WRITES_FROM", 1)
    derive_site(root=root, out=forked)
    assert_same_files(alone, forked)
    manifest = json.loads((forked / ".kb-derive-manifest.json").read_text(encoding="utf-8"))
    run_pages = [name for name in manifest if name.startswith("content/runs/")]
    assert len(run_pages) == len(RUN_FIXTURES) + 1  # and the list's _index.md
    page = forked / run_pages[-1]
    written = page.stat().st_mtime_ns
    derive_site(root=root, out=forked)
    assert page.stat().st_mtime_ns == written  # unchanged bytes are not written again


def test_runs_prepared_in_two_passes_by_workers_are_those_prepared_alone(tmp_path, monkeypatch):
    """From PARALLEL_FROM run files to prepare on, workers read them twice: what the analysis
    needs, then (while it runs) the pages' texts. The same bytes as preparing each whole in
    this process; the cache it leaves gives them again; a file holding no mapping is left out
    either way."""
    import shutil

    from pgbench_kb.derive import prepared as prepared_module

    root = fixture_root(tmp_path)
    runs = next(root.rglob("*.yaml")).parent
    (runs / "zz-not-a-mapping.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    alone, twice, warm = tmp_path / "alone", tmp_path / "twice", tmp_path / "warm"
    derive_site(root=root, out=alone)
    shutil.rmtree(root / "build" / "cache")
    monkeypatch.setattr(prepared_module, "PARALLEL_FROM", 1)
    derive_site(root=root, out=twice)
    assert {"prepared": len(RUN_FIXTURES) + 1, "reused": 0} == prepared_module.LAST_LOAD
    assert_same_files(alone, twice)
    derive_site(root=root, out=warm)
    assert {"prepared": 0, "reused": len(RUN_FIXTURES) + 1} == prepared_module.LAST_LOAD
    assert_same_files(alone, warm)
    cached = prepared_module.load(root)
    assert all("title" not in run.row for run in cached)  # titles are the build's, not the cache's


def test_a_derivation_cut_off_while_the_cache_is_saved_leaves_no_partial_cache(
    tmp_path, monkeypatch
):
    """The cache of many runs is saved by a process of its own while the pages are written;
    an interruption then (Ctrl-C) ends it and removes what it had written, and no process is
    left."""
    import multiprocessing
    import time

    from pgbench_kb.derive import prepared as prepared_module
    from pgbench_kb.derive import site as site_module

    root = fixture_root(tmp_path)
    monkeypatch.setattr(prepared_module, "PARALLEL_FROM", 1)
    real_dump = prepared_module.pickle.dump

    def slow_dump(value, stream, **options):
        real_dump(value, stream, **options)
        stream.flush()
        time.sleep(60)

    def interrupted(self):
        cache = root / "build" / "cache"
        for _ in range(200):  # the saving process writes its partial file meanwhile
            if any(cache.glob("*.tmp")):
                break
            time.sleep(0.05)
        assert any(cache.glob("*.tmp"))
        raise KeyboardInterrupt

    monkeypatch.setattr(prepared_module.pickle, "dump", slow_dump)
    monkeypatch.setattr(site_module.Site, "write", interrupted)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        derive_site(root=root)
    assert time.monotonic() - started < 30
    assert multiprocessing.active_children() == []
    assert sorted(p.name for p in (root / "build" / "cache").iterdir()) == []


def test_a_file_made_early_that_fails_says_so_in_one_line(tmp_path, monkeypatch):
    """The download of the comparisons is made by a process of its own as soon as the
    analysis is done (``Site.early``); its error comes back as the derivation's."""
    from pgbench_kb.derive import site as site_module

    def failing(_known):
        raise DeriveError("cannot be written", path="comparisons.json", hint="free some space")

    monkeypatch.setattr(site_module, "comparisons_text", failing)
    with pytest.raises(DeriveError, match=r"comparisons\.json: cannot be written"):
        derive_site(root=fixture_root(tmp_path))


def test_downloads_hold_every_run(derived: Path):
    everything = json.loads((derived / "static" / "downloads" / "runs.json").read_text())
    assert len(everything["runs"]) == len(RUN_FIXTURES)
    lines = (derived / "static" / "downloads" / "runs.csv").read_text().splitlines()
    assert lines[0].startswith("id,file,origin") and len(lines) == len(RUN_FIXTURES) + 1
    comparisons = json.loads((derived / "static" / "downloads" / "comparisons.json").read_text())
    assert comparisons["format"] == "pgbench-kb/comparisons/1"


@pytest.mark.parametrize(
    ("array", "expected"),
    [
        ({"level": "raid10", "disks": 4, "media": "hdd", "rpm": 15000}, "RAID1+0, 4× HDD 15k rpm"),
        ({"level": "raid5", "disks": 4, "media": "hdd", "rpm": None}, "RAID5, 4× HDD"),
        ({"level": "single", "disks": 1, "media": "ssd"}, "single SSD"),
        ({"level": "zfs-mirror", "disks": 2, "media": "ssd"}, "ZFS mirror, 2× SSD"),
        # Regression: 7200 rpm was shown as "7k rpm" (integer division).
        ({"level": "raid1", "disks": 2, "media": "hdd", "rpm": 7200}, "RAID1, 2× HDD 7.2k rpm"),
        # Issue 32: a cloud volume's type is what tells gp3 from io2.
        (
            {"level": "raid0", "disks": 16, "media": "virtual", "disk_model": "gp3"},
            "RAID0, 16× virtual disk (gp3)",
        ),
        (
            {"level": "single", "disks": 1, "media": "virtual", "disk_model": "io2"},
            "single virtual disk (io2)",
        ),
        (None, None),
    ],
)
def test_describe_array(array, expected):
    assert describe_array(array) == expected


@pytest.mark.parametrize(
    ("controller", "expected"),
    [
        ({"write_cache": "write-back", "battery_backed": True}, "battery-backed write cache"),
        ({"write_cache": "write-back", "battery_backed": False}, "write-back cache, no battery"),
        ({"write_cache": "disabled", "battery_backed": True}, "controller write cache off"),
        ({"write_cache": None, "battery_backed": None}, None),
    ],
)
def test_describe_controller(controller, expected):
    assert describe_controller(controller) == expected


def test_short_storage():
    storage = {
        "data": {"array": {"level": "raid5", "disks": 4, "media": "hdd", "rpm": 10000},
                 "filesystem": "ext3"},
        "wal": {"placement": "own-array",
                "array": {"level": "raid1", "disks": 2, "media": "hdd", "rpm": 10000}},
        "controller": {"write_cache": "write-back", "battery_backed": True},
    }  # fmt: skip
    assert short_storage(storage) == "RAID5 4×10k HDD, ext3, WAL on RAID1 2×10k HDD, BBU cache"
    # Issue 32: a cloud volume's type tells the striped gp3 volumes from the io2 one.
    gp3 = {"level": "raid0", "disks": 16, "media": "virtual", "disk_model": "gp3"}
    io2 = {"level": "single", "disks": 1, "media": "virtual", "disk_model": "io2"}
    assert short_storage({"data": {"array": gp3}}) == "RAID0 16×gp3 virtual disk"
    assert short_storage({"data": {"array": io2}}) == "io2 virtual disk"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2010", "2010-01-01"),
        ("2006-06", "2006-06-01"),
        ("2026-11-22T00:15:00Z", "2026-11-22T00:15:00Z"),
        ("soon", None),
        (None, None),
    ],
)
def test_hugo_date(text, expected):
    assert hugo_date(text) == expected


@pytest.mark.parametrize(
    ("version", "expected"),
    [("8.0", "8.0"), ("8.4.2", "8.4"), ("10.1", "10"), ("17devel", "17"), ("x", None)],
)
def test_major_version(version, expected):
    assert major_version(version) == expected


def test_percentiles_in_reading_order():
    """Regression: the page listed percentiles in map order (max, min, p50…)."""
    shown = ordered_percentiles({"max": 9.0, "p999": 5.0, "p50": 1.0, "p99": None, "p90": 2.0})
    assert [p["label"] for p in shown] == ["median", "p90", "p99.9", "max"]


def test_tail_percentiles_of_a_small_sample_are_not_shown():
    """Regression: with a 5% log sample, p99.9 rested on a few hundred latencies (it was the
    max) and was shown as if it meant something."""
    values = {"p50": 1.0, "p90": 2.0, "p95": 2.5, "p99": 3.0, "p999": 4.0, "max": 4.0}
    shown = ordered_percentiles(values, {"latencies": 619, "sampling_rate": 0.05})
    assert [p["label"] for p in shown] == ["median", "p90", "p95", "max"]
    shown = ordered_percentiles(values, {"latencies": 20_000, "sampling_rate": None})
    assert [p["label"] for p in shown] == ["median", "p90", "p95", "p99", "p99.9", "max"]
    assert describe_percentile_source({"latencies": 619, "sampling_rate": 0.052}) == (
        "from 619 logged transactions (about 5.2% of all)"
    )


def test_settings_written_by_initdb_are_kept_apart():
    split = split_settings(
        {"shared_buffers": "128MB", "max_connections": "100", "timezone": "UTC",
         "commit_delay": 20000, "max_wal_size": "4GB"}
    )  # fmt: skip
    assert [s["name"] for s in split["changed"]] == ["commit_delay", "max_wal_size"]
    assert [s["name"] for s in split["initdb"]] == ["max_connections", "shared_buffers", "timezone"]


def test_a_run_page_tells_unknown_settings_from_defaults():
    """Issue 31: a transcribed run whose source states no setting read "No setting recorded as
    changed from PostgreSQL's defaults"."""
    assert split_settings({})["known"] is True  # measured: every setting at its default
    assert split_settings({}, transcribed=True)["known"] is False
    assert split_settings(None)["known"] is False
    assert split_settings({"fsync": "off"}, transcribed=True)["known"] is True


def test_unstated_settings_of_transcribed_runs_are_not_called_default():
    runs = [
        {"origin": "transcribed", "postgres": {"settings": {"commit_delay": 0}}},
        {"origin": "transcribed", "postgres": {"settings": {}}},
    ]
    assert distinguishing(runs) == [["commit_delay=0"], ["commit_delay=not stated"]]


def test_titles_name_what_sets_a_run_apart_and_nothing_else():
    base = {"origin": "measured", "postgres": {"version": "16.4", "settings": {"fsync": "on"}}}
    patched = {
        "origin": "measured",
        "postgres": {"version": "16.4", "build": {"patches": ["group commit"]}, "settings": {}},
    }
    assert distinguishing([base, patched]) == [
        ["fsync=on"],
        ["patched: group commit", "fsync at its default (on)"],
    ]
    assert distinguishing([base, base]) == [[], []]


def test_a_setting_left_unset_reads_as_its_value_not_as_default():
    """Issue 31: titles and legends read "checkpoint_timeout=default", which names no value."""
    measured = {"origin": "measured", "postgres": {"version": "18.6", "settings": {}}}
    spread = {
        "origin": "measured",
        "postgres": {
            "version": "18.6",
            "settings": {
                "checkpoint_timeout": "30s",
                "autovacuum_worker_slots": 8,
                "commit_siblings": 4,
            },
        },
    }
    old = {"origin": "measured", "postgres": {"version": "15.18", "settings": {}}}
    unknown = {"origin": "measured", "postgres": {"version": "16.4", "settings": {}}}
    assert distinguishing([measured, spread]) == [
        ["autovacuum_worker_slots at its default (16)", "checkpoint_timeout at its default (5min)",
         "commit_siblings at its default (5)"],
        ["autovacuum_worker_slots=8", "checkpoint_timeout=30s", "commit_siblings=4"],
    ]  # fmt: skip
    assert distinguishing([old, spread])[0] == [
        "PG 15.18", "autovacuum_worker_slots not in PostgreSQL 15",
        "checkpoint_timeout at its default (5min)", "commit_siblings at its default (5)",
    ]  # fmt: skip
    assert distinguishing([unknown, spread])[0] == [
        "PG 16.4", "autovacuum_worker_slots not in PostgreSQL 16",
        "checkpoint_timeout at the server's default", "commit_siblings at the server's default",
    ]  # fmt: skip
    assert [default_words(n, v) for n, v in (
        ("max_wal_size", "8.3.23"), ("checkpoint_segments", "9.5.25"), ("shared_buffers", "15"),
        ("checkpoint_completion_target", "8.2.14"), ("wal_buffers", "8.4.2"),
    )] == [
        "not in PostgreSQL 8.3", "not in PostgreSQL 9.5", "at its default (128MB)",
        "not in PostgreSQL 8.2", "at the server's default",
    ]  # fmt: skip
    # where a value stands (a comparison's sides, an interaction's levels)
    assert [value_words(n, v) for n, v in (
        ("checkpoint_timeout", "18.6"), ("fsync", "8.4.2"), ("wal_buffers", "8.4.2"),
        ("max_wal_size", "8.3.23"),
    )] == ["5min (default)", "on", "server default", "not in PostgreSQL 8.3"]  # fmt: skip


def test_a_second_derivation_rewrites_only_what_changed(tmp_path):
    root = fixture_root(tmp_path)
    derive_site(root=root)
    pages = root / "build" / "site" / "content" / "runs"
    kept = pages / "20261122T101500Z-ci-box-tpcb-like-s2-c4-1f3a9c2e.md"
    before = kept.stat().st_mtime_ns
    (pages / "stale.md").write_text("left by hand")
    derive_site(root=root)
    assert kept.stat().st_mtime_ns == before
    assert not (pages / "stale.md").exists()
    kept.write_text("edited by hand")  # a generated file changed behind derive's back
    derive_site(root=root)
    assert kept.read_text().startswith('{"title"')


def test_out_folder_not_made_by_derive_is_left_alone(tmp_path):
    """Regression: `kb derive --out DIR` deleted any DIR it was given (the project too)."""
    root = tmp_path / "root"
    (root / "data" / "runs").mkdir(parents=True)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("keep")
    with pytest.raises(DeriveError, match="was not written by kb derive; nothing was touched"):
        derive_site(root=root, out=victim)
    assert (victim / "important.txt").read_text() == "keep"
    fresh = tmp_path / "fresh"
    derive_site(root=root, out=fresh)
    (fresh / "content" / "stale.md").write_text("from an earlier derivation")
    derive_site(root=root, out=fresh)  # a folder derive made is replaced whole
    assert not (fresh / "content" / "stale.md").exists()
    (root / "build" / "site").mkdir(parents=True)
    (root / "build" / "site" / "old.md").write_text("an old build without the marker")
    derive_site(root=root)  # the default folder belongs to derive
    assert not (root / "build" / "site" / "old.md").exists()


def test_ids_that_would_leave_the_folder_are_refused(tmp_path):
    """Regression: a run id of ../../x made derive write outside its folder."""
    root = tmp_path / "root"
    runs = root / "data" / "runs"
    runs.mkdir(parents=True)
    (runs / "x.yaml").write_text("id: ../../x\nmachine: m\n")
    with pytest.raises(DeriveError, match="is not a plain slug"):
        derive_site(root=root, out=tmp_path / "out")
    assert not (tmp_path / "x.md").exists()
    assert not (tmp_path / "out").exists()


def test_comparison_pages_show_latency_the_way_latency_reads(shipped_derived: Path):
    """Issue 9: latency compared wherever both groups have it. On the site each latency line
    sits under its tps comparison, in ms, and a higher latency is never called a gain."""
    out = shipped_derived
    shown = []
    for page in (out / "content" / "comparisons").glob("*.md"):
        front = json.loads(page.read_text(encoding="utf-8").split("\n", 1)[0])
        for item in front["params"].get("comparisons") or []:
            shown.extend(item.get("latency") or [])
    assert shown, "no comparison of the measured runs shows its latency"
    for line in shown:
        assert line["a"].endswith(" ms") and line["b"].endswith(" ms"), line
        if line["change"].startswith("+") and line["verdict"] not in (
            "within_noise",
            "spread_unknown",
            "not_comparable",
        ):
            assert line["words"] == "higher: worse", line
        if line["change"].startswith("−") or line["change"].startswith("-"):
            assert line["words"] != "higher: worse", line
    download = json.loads((out / "static" / "downloads" / "comparisons.json").read_text())
    metrics = {c.get("metric") for c in download["comparisons"]}
    assert {"tps", "latency_avg_ms", "wal_bytes_per_txn", "wal_fpi_per_txn"} <= metrics
    _costs_read_as_costs(out)


def _costs_read_as_costs(out: Path) -> None:
    """Issue 36: per-transaction costs beside tps on comparison pages (words and a table, a
    higher cost never a gain) and on configuration pages (the words after the verdict)."""
    words, rows = [], []
    for page in (out / "content" / "comparisons").glob("*.md"):
        front = json.loads(page.read_text(encoding="utf-8").split("\n", 1)[0])
        for item in front["params"].get("comparisons") or []:
            if item.get("costs"):
                words.append((item["title"], item["costs"]["words"]))
                rows.extend(item["costs"]["rows"])
    assert any(
        title.startswith("checkpoint_timeout: 1800s → 30s")
        and (w or "").startswith("2.0× the WAL bytes, ")
        and (w or "").endswith(", tps within the noise")
        for title, w in words
    ), words
    held_back = ("not significant once adjusted", "by less than 5%")
    for row in rows:
        if row["verdict"] == "worse":
            assert row["change"][0] in "+±—", row
            assert row["words"] == "higher: worse" or row["words"].endswith(held_back), row
        if row["verdict"] == "better":
            assert row["change"][0] in "−±—", row
            assert row["words"] == "lower: better" or row["words"].endswith(held_back), row
        assert "better" not in row["words"] or row["verdict"] == "better", row
    listed = []
    for page in (out / "content" / "groups").glob("*.md"):
        front = json.loads(page.read_text(encoding="utf-8").split("\n", 1)[0])
        listed += [c["costs"] for c in front["params"].get("comparisons") or [] if c.get("costs")]
    assert any("the full-page images" in c for c in listed), "no configuration page shows costs"


def test_many_curves_get_a_page_per_machine(tmp_path, monkeypatch):
    """Regression: 665 throughput curves of 10,000 synthetic runs were one page with 665
    charts. Past CURVES_SPLIT_FROM curves they get a page per machine, listed on the curves page."""
    from pgbench_kb.derive import comparison_pages
    from pgbench_kb.derive import writer as site_module

    def curve(machine: str, n: int) -> dict:
        points = [{"x": c, "tps": 100.0 * c + n, "n": 1, "group": f"g{n}-{c}"} for c in (1, 2, 4)]
        return {
            "id": f"{machine}-clients-{n:08x}",
            "machine": machine,
            "swept": "benchmark.clients",
            "held_equal": {},
            "points": points,
            "text": f"curve {n}",
        }

    known = {"curves": [curve("box-a", 1), curve("box-a", 2), curve("box-b (client c)", 3)]}
    out = tmp_path / "site"
    site_module.prepare_out(out)
    site = site_module.Site(tmp_path, out)
    monkeypatch.setattr(comparison_pages, "CURVES_SPLIT_FROM", 2)
    assert comparison_pages.write_curves(site, known, {}) == 3
    index = json.loads(site.text("content/comparisons/curves.md").split("\n")[0])
    assert [(p["title"], p["url"], p["n"]) for p in index["params"]["pages"]] == [
        ("box-a", "comparisons/curves--box-a/", 2),
        ("box-b", "comparisons/curves--box-b/", 1),
    ]
    page = json.loads(site.text("content/comparisons/curves--box-a.md").split("\n")[0])
    assert page["title"] == "Throughput curves on box-a"
    assert [c["id"] for c in page["params"]["curves"]] == [
        "box-a-clients-00000001",
        "box-a-clients-00000002",
    ]


def test_a_file_in_the_place_of_an_output_folder_is_a_located_error(tmp_path):
    """Regression: a file where kb derive writes a folder (build/site/content/runs) ended it
    with a traceback."""
    root = fixture_root(tmp_path)
    out = root / "build" / "site"
    derive_site(root=root, out=out)
    runs = out / "content" / "runs"
    shutil.rmtree(runs)
    runs.write_text("in the way", encoding="utf-8")
    with pytest.raises(DeriveError, match=r"File exists|Not a directory") as caught:
        derive_site(root=root, out=out)
    assert str(runs) in str(caught.value) and "\n" not in str(caught.value)


def test_a_run_page_is_made_again_only_when_what_it_is_made_of_changed(tmp_path, monkeypatch):
    """A run page's inputs (its prepared texts, title, row and links) are kept in the manifest:
    a derivation with the same inputs does not make the page again, unless the file is no
    longer as it was written. (That a change of inputs makes it again, warm builds equal to
    cold ones show: tests/derive/test_derive_cache.py.)"""
    from pgbench_kb.derive import site as site_module

    root = fixture_root(tmp_path)
    out = tmp_path / "site"
    derive_site(root=root, out=out)
    log = tmp_path / "made.txt"  # pages may be made in forked workers: counted in a file
    real = site_module.run_page

    def counting(run, row, *rest):
        with log.open("a", encoding="utf-8") as stream:
            stream.write(f"{row['id']}\n")
        return real(run, row, *rest)

    def made() -> list[str]:
        return log.read_text(encoding="utf-8").split() if log.exists() else []

    monkeypatch.setattr(site_module, "run_page", counting)
    derive_site(root=root, out=out)
    assert made() == []
    page = next((out / "content" / "runs").glob("[!_]*.md"))
    page.write_text(page.read_text(encoding="utf-8") + " ", encoding="utf-8")  # hand-edited
    derive_site(root=root, out=out)
    front = json.loads(page.read_text(encoding="utf-8").split("\n")[0])
    assert made() == [front["params"]["run"]["id"]]


# ---------------------------------------------------------------------------------------------
# checkpoints under the progress chart (issue #21: progress charts mark checkpoints)


def _with_checkpoints(found, stats=None) -> dict:
    return {"results": {"checkpoints": found}, "server_stats": stats}


def test_checkpoint_words_say_what_each_record_knows():
    assert marks.words(_with_checkpoints([])) == (
        "No checkpoint ran during the run (the server's log)."
    )
    counted = {"checkpoints_timed": 2, "checkpoints_requested": 1}
    assert marks.words({"results": {}, "server_stats": counted}) == (
        "3 checkpoints ran during the run (2 timed, 1 requested, by the server's counters); "
        "their times were not recorded, so the chart does not mark them."
    )
    assert marks.words({"results": {}, "server_stats": None}) == (
        "The run file does not say whether a checkpoint ran during the run."
    )
    found = [
        {"started_s": None, "reason": None, "completed_s": 0.9, "buffers_written": 12},
        {"started_s": 30.25, "reason": "time", "completed_s": 57.0, "buffers_written": 2410},
        {"started_s": 61.0, "reason": "immediate force wait", "completed_s": 61.2,
         "buffers_written": 1},
        {"started_s": 90.0, "reason": "xlog", "completed_s": 100.0, "buffers_written": None},
        {"started_s": 110.0, "reason": "wal time", "completed_s": None, "buffers_written": None},
    ]  # fmt: skip
    assert marks.words(_with_checkpoints(found)) == (
        "5 checkpoints ran during the run, shaded on the chart (the server's log): one begun "
        "before pgbench started (ended at 0.9 s, wrote 12 buffers); timed at 30.2 s (took "
        "26.8 s, wrote 2,410 buffers); requested at 61 s (took 0.2 s, wrote 1 buffer); by WAL "
        "volume at 90 s (took 10 s); and 1 more."
    )


def test_checkpoint_cell_names_the_checkpoints_running_in_each_interval():
    spans = marks.spans_of(
        _with_checkpoints(
            [
                {"started_s": None, "reason": None, "completed_s": 0.5},
                {"started_s": 2.5, "reason": "time", "completed_s": 3.0},
                {"started_s": 3.5, "reason": "wal", "completed_s": None},
            ]
        )
    )
    cells = [marks.during(spans, t, 1.0) for t in (1.0, 2.0, 3.0, 4.0, 9.0)]
    assert cells == ["begun before the run", "—", "timed", "by WAL volume", "by WAL volume"]
    assert marks.spans_of({"results": {"checkpoints": None}}) is None


def test_progress_chart_clips_checkpoints_to_its_time_axis():
    """A checkpoint begun before the first point starts at the axis (no dashed start line);
    one still running ends at the last point; one wholly after the run is not drawn."""
    svg = charts.progress_svg(
        [1, 2, 3, 4],
        [10, 11, 12, 13],
        title="t",
        checkpoints=[(None, 1.5), (3.5, None), (9.0, 10.0)],
    )
    assert svg is not None
    assert svg.count(f'fill="{charts.CHECKPOINT_FILL}"/>') == 2
    assert svg.count('stroke-dasharray="3 2"') == 1
    assert ">checkpoint</text>" in svg
    bare = charts.progress_svg([1, 2, 3, 4], [10, 11, 12, 13], title="t")
    assert "checkpoint" not in bare and charts.CHECKPOINT_FILL not in bare


def test_curves_of_two_bench_sessions_are_named_by_each_session_s_start():
    """The legend of an overlay names what sets its curves apart; for bench sessions, the start
    alone as a reader reads a time (no random token), short enough for a phone-wide legend, and
    distinct."""
    from pgbench_kb.derive.comparison_pages import series_names

    held = {"benchmark.workload.name": "tpcb-like", "benchmark.scale": 16}
    items = [
        {"title": "t", "held_equal": {**held, "repeat.session": s}}
        for s in ("20261127T104153Z-b5cce8", "20261127T112406Z-fc6b71")
    ]
    assert series_names(items) == [
        "session 2026-11-27 10:41 UTC",
        "session 2026-11-27 11:24 UTC",
    ]


def test_a_smoke_run_is_no_result_on_the_site(derived: Path):
    """Regression (issue 35): a 3-second, scale-2 smoke run showed on the home page's latest
    runs as "1,951 tps". Its page stays, labelled; the home page, the explorer and the feed
    leave it out."""
    smoke = "20261122T101500Z-ci-box-tpcb-like-s2-c4-1f3a9c2e"
    home = json.loads((derived / "data" / "home.json").read_text(encoding="utf-8"))
    assert home["recent"] and all(str(r["id"]) != smoke for r in home["recent"])
    explorer = (derived / "content" / "results" / "_index.md").read_text(encoding="utf-8")
    assert "ci-box" in (derived / "content" / "runs" / f"{smoke}.md").read_text(encoding="utf-8")
    assert smoke not in explorer
    assert smoke not in (derived / "static" / "feed.xml").read_text(encoding="utf-8")


def test_titles_name_the_settings_not_our_bench_profiles_names():
    """Issue 31: a configuration is not named after our bench's settings profile (``profile``,
    ``unsafe-fsync-off``) but by the setting that sets it apart, as postgresql.conf writes it;
    the value most runs share goes without saying. A source's own name is kept."""

    def measured(profile: str, **settings: Any) -> dict[str, Any]:
        return {
            "origin": "measured",
            "postgres": {
                "settings_profile": profile,
                "settings": {"max_wal_size": "8GB", **settings},
            },
        }

    runs = [measured("profile"), measured("baseline"), measured("unsafe-fsync-off", fsync=False)]
    assert distinguishing(runs) == [[], [], ["fsync=off"]]
    transcribed = [
        {"origin": "transcribed", "postgres": {"settings_profile": name, "settings": {}}}
        for name in ("defaults", "more memory")
    ]
    assert distinguishing(transcribed) == [["defaults"], ["more memory"]]
