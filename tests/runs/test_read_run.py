"""``runfile.read_run`` is the one way to read a run file: whichever reader it picks inside
(the fast reader for the form ``kb import`` writes, the full loader for anything else), the
data is what plain YAML says it is. Every run file under data/runs is read as kb reads it
and compared with libyaml's safe loader (timestamps kept as text, as run files keep them), as are
synthetic runs with long progress series and the parts the analysis leaves out."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from kbtest import REPO, random_synth_run
from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.runfile import RunDocument, dump_run, read_run, read_run_text


class _Reference(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """``yaml.safe_load`` (libyaml when present), except that timestamps stay text."""


_Reference.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def reference(text: str) -> Any:
    return yaml.load(text, Loader=_Reference)


def same(a: Any, b: Any) -> bool:
    """Equal, types included (``1`` is not ``1.0``, ``True`` is not ``1``)."""
    return a == b and repr(a) == repr(b)


def without(data: dict[str, Any], skip: frozenset[str]) -> dict[str, Any]:
    """``data`` less the keys ``skip`` names (``top`` or ``top.second``)."""
    out = {k: v for k, v in data.items() if k not in skip}
    for dotted in skip:
        top, _, second = dotted.partition(".")
        if second and isinstance(out.get(top), dict):
            out[top] = {k: v for k, v in out[top].items() if k != second}
    return out


def test_every_shipped_run_file_reads_as_plain_yaml_says() -> None:
    from pgbench_kb.analyze.load import SKIP

    paths = sorted((REPO / "data" / "runs").rglob("*.yaml"))
    assert paths
    fast = 0
    for path in paths:
        expected = reference(path.read_text(encoding="utf-8"))
        document = read_run(path)
        assert same(document.data, expected), path
        # (and so the full loader's: it read what the fast reader did not, and what the fast
        # reader read it reads the same, tests/runs/test_fastyaml_exact.py)
        skipped = read_run(path, skip=SKIP)
        if skipped.fast:
            assert same(skipped.data, without(expected, SKIP)), path
        fast += document.fast
    # The fast reader is what makes the 10,000-run targets: it must read what kb import wrote.
    assert fast >= 0.9 * len(paths)


def test_lines_are_the_full_loaders_whichever_reader_reads() -> None:
    paths = sorted((REPO / "data" / "runs").rglob("*.yaml"))[::10]
    for path in paths:
        fast, full = read_run(path, lines=True), read_run(path, lines=True, fast=False)
        assert not full.fast
        assert fast.lines == full.lines, path
        assert fast.line_of("results.tps") == full.line_of("results.tps")


def long_progress_run(rng: random.Random, points: int) -> dict[str, Any]:
    run = random_synth_run(rng, 0)
    run["results"]["progress"] = {
        "interval_s": 1,
        "t_s": [float(t) for t in range(1, points + 1)],
        "tps": [round(rng.uniform(0, 2000), 1) if t % 97 else None for t in range(points)],
        "latency_ms": [round(rng.uniform(0, 50), 3) for _ in range(points)],
        "stddev_ms": None,
        "lag_ms": None,
        "failed": [0] * points,
        "raw_path": None,
    }
    return run


def test_synthetic_runs_and_long_progress_series_read_as_plain_yaml_says() -> None:
    from pgbench_kb.analyze.load import SKIP

    rng = random.Random(34)
    runs = [random_synth_run(rng, i) for i in range(20)]
    runs += [long_progress_run(rng, points) for points in (1, 2, 600, 5000)]
    for run in runs:
        text = dump_run(run)
        document = read_run_text(text, "x.yaml")
        assert document.fast
        assert same(document.data, reference(text))
        assert same(document.data, run)
        assert same(read_run_text(text, "x.yaml", skip=SKIP).data, without(run, SKIP))
        lines = read_run_text(text, "x.yaml", lines=True)
        assert lines.lines == read_run_text(text, "x.yaml", lines=True, fast=False).lines


def test_a_file_outside_the_canonical_form_is_read_by_the_full_loader(tmp_path: Path) -> None:
    path = tmp_path / "hand.yaml"
    path.write_text('id: "hand"\nresults:\n  tps: [1, 2.5]\n  when: 2006-06-01\n')
    document = read_run(path, lines=True)
    assert isinstance(document, RunDocument)
    assert not document.fast
    assert document.data == {"id": "hand", "results": {"tps": [1, 2.5], "when": "2006-06-01"}}
    assert document.line_of("results.when") == 4
    assert document.path == str(path)


def test_errors_name_the_path_given_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: x\nid: y\n")
    with pytest.raises(RunFileError) as caught:
        read_run(path, shown="data/runs/bad.yaml")
    assert str(caught.value).startswith("data/runs/bad.yaml:2: id: duplicate key 'id'")
