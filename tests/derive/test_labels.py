"""Reader words (issue 21, item 6): field labels, settings as postgresql.conf lines with their
units, and what a change did to the data (the recent-changes page)."""

from __future__ import annotations

import json

import pytest

from pgbench_kb.derive.gitlog import summary
from pgbench_kb.derive.labels import conf_line, field_label, readable, value_words
from pgbench_kb.derive.run_view import SCHEMA


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("server.os.release", "OS release"),  # regression: `server.os.release = 12`
        ("benchmark.workload.scripts.1.weight", "workload script 1 weight"),
        ("storage.data.array", "data array"),
        ("storage.wal.array.rpm", "WAL array rpm"),
        ("results.latency_percentiles_ms.p999", "latency percentiles (ms) p99.9"),
        ("benchmark.warmup.duration_s", "warm-up duration (s)"),
        ("postgres.settings.shared_buffers", "shared_buffers"),
        ("storage.data.read_ahead_kb", "data read ahead (kB)"),
    ],
)
def test_fields_are_named_in_words(path: str, label: str):
    assert field_label(path) == label


def _schema_paths(node: dict, path: str, out: set[str], defs: dict, depth: int = 0) -> None:
    if depth > 10:
        return
    if "$ref" in node:
        node = {**defs.get(node["$ref"].split("/")[-1], {}), **node}
    for key, child in (node.get("properties") or {}).items():
        child_path = f"{path}.{key}" if path else key
        out.add(child_path)
        if isinstance(child, dict):
            _schema_paths(child, child_path, out, defs, depth + 1)


def test_no_field_of_the_run_schema_is_labelled_with_its_path():
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    paths: set[str] = set()
    _schema_paths(schema, "", paths, schema.get("$defs") or {})
    assert len(paths) > 100
    dotted = [
        p
        for p in paths
        if (field_label(p) == p and "." in p) or readable(field_label(p)) != field_label(p)
    ]
    assert dotted == []


def test_sentences_and_values_lose_their_paths_and_python_values():
    why = "the sessions also differ: benchmark.duration_s, benchmark.warmup.duration_s"
    assert readable(why) == "the sessions also differ: duration (-T), warm-up duration (s)"
    # Regression: `('results.of_runs', 'results.statistic', 'storage.data.array')`.
    uncertain = ("results.of_runs", "results.statistic", "storage.data.array")
    assert value_words(uncertain) == "runs behind the figure, what the figure is, data array"
    assert value_words(None) == "not stated"
    assert value_words(True) == "yes"


@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        ("shared_buffers", 23987, "shared_buffers = 23987  # 8 kB pages ≈ 187 MB"),
        ("shared_buffers", "128MB", "shared_buffers = 128MB"),
        ("commit_delay", 20000, "commit_delay = 20000  # µs = 20 ms"),
        ("checkpoint_timeout", 900, "checkpoint_timeout = 900  # s = 15 min"),
        ("checkpoint_segments", 32, "checkpoint_segments = 32  # WAL segments of 16 MB ≈ 512 MB"),
        ("work_mem", 10240, "work_mem = 10240  # kB = 10 MB"),
        ("wal_buffers", "544", "wal_buffers = 544  # 8 kB pages ≈ 4.25 MB"),
        ("fsync", False, "fsync = off"),
        ("datestyle", "iso, mdy", "datestyle = 'iso, mdy'"),
        ("checkpoint_completion_target", 0.9, "checkpoint_completion_target = 0.9"),
    ],
)
def test_settings_are_postgresql_conf_lines_with_the_unit_of_a_bare_number(name, value, line):
    """Regression (issue 21): `shared_buffers 23,987` (thousands separator, no unit)."""
    assert conf_line(name, value) == line


def test_a_build_with_another_block_size_counts_its_own_pages():
    assert conf_line("shared_buffers", 1024, 16384) == (
        "shared_buffers = 1024  # 16 kB pages ≈ 16 MB"
    )


def test_a_change_says_what_it_did_to_the_data():
    changed = [
        ("A", "data/runs/2026/11/a.yaml"),
        ("A", "data/runs/2026/11/b.yaml"),
        ("M", "content/hardware/box.md"),
        ("D", "data/runs/2006/06/c.yaml"),
        ("M", "data/answers.yaml"),
    ]
    assert summary(changed) == (
        "2 run files added; 1 hardware note changed; 1 run file removed; the answers' text changed"
    )


def test_two_configurations_are_named_by_what_sets_them_apart():
    """Issue 31: the version page's sixteen titles read "PG 15.18, -M simple, scale 8 → …" and
    its chart's bars were cut to "PG 15.18, -M simp…"."""
    from pgbench_kb.derive.labels import apart_parts

    assert apart_parts("PG 15.18, -M simple, scale 8", "PG 18.6, -M simple, scale 8") == (
        "PG 15.18",
        "PG 18.6",
    )
    # One side would be left with nothing: both as they are.
    a, b = "PG 18.6, scale 8", "PG 18.6, scale 8, commit_delay=1000"
    assert apart_parts(a, b) == (a, b)


def test_a_settings_bare_number_is_written_with_its_unit():
    """Issue 31: "commit_delay: 0 → 20,000" read without a unit."""
    from pgbench_kb.derive.knowledge import differing_values

    assert differing_values(0, 20000, "postgres.settings.commit_delay") == ("0 µs", "20,000 µs")
    assert differing_values(2, 4, "postgres.settings.commit_siblings") == ("2", "4")


def test_bars_that_would_read_the_same_say_what_else_differs():
    """Issue 31: the RAID overview's three bars all read "RAID5 → RAID1+0"."""
    from pgbench_kb.derive.labels import bar_labels

    def item(short, panel, *held):
        return {"short": short, "panel": panel, "held": list(held)}

    items = [
        item("RAID5 → RAID1+0", 1, "clients = 100", "data disk speed (rpm) = 15,000",
             "WAL placement = own array"),
        item("RAID5 → RAID1+0", 1, "clients = 100", "data disk speed (rpm) = 15,000",
             "WAL placement = with the data"),
        item("RAID5 → RAID1+0", 1, "clients = 100", "data disk speed (rpm) = 10,000",
             "WAL placement = with the data", "OS = Debian"),
        item("RAID5 → RAID1+0", 2, "clients = 8"),
        item("off → on", 1, "clients = 4"),
    ]  # fmt: skip
    assert bar_labels(items) == [
        "15k rpm, WAL apart, OS not stated",
        "15k rpm, WAL shared, OS not stated",
        "10k rpm, WAL shared, OS Debian",
        "RAID5 → RAID1+0",  # alone in its panel
        "off → on",
    ]
