"""The result trees shipped in data/ as imported by ``kb import TREE --mapping``: each run of a
set points at its output by address at the mapping's commit (and keeps its sha256, or the
output itself when the terms allow); repeats are complete groups of one session; the mapping
itself checks clean. (Outputs that are kept are re-read against their figures by
tests/runs/test_import_tree.py and by ``kb check``, which re-parses every kept raw output.)"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from pgbench_kb.analyze.load import bench_session
from pgbench_kb.runs.import_tree import mapping_problems
from pgbench_kb.runs.runfile import load_yaml_file, read_run

ROOT = Path(__file__).resolve().parents[2]
MAPPINGS = sorted((ROOT / "data" / "imports").glob("*/mapping.yaml"))


def runs_of(title: str, revision: str) -> list[dict]:
    found = []
    for path in sorted((ROOT / "data" / "runs").rglob("*.yaml")):
        if title.encode() not in path.read_bytes():
            continue
        data = read_run(path).data
        source = data["provenance"].get("source") or {}
        if source.get("title") == title and source.get("revision") == revision:
            found.append(data)
    return found


@pytest.mark.parametrize("mapping", MAPPINGS, ids=lambda p: p.parent.name)
def test_an_imported_set_is_whole_and_points_at_its_outputs(mapping: Path) -> None:
    assert mapping_problems(mapping, str(mapping)) == []
    given = load_yaml_file(mapping).data
    source = given["source"]
    runs = runs_of(source["title"], source["revision"])
    assert runs
    pattern = re.compile(given["files"]["pattern"])
    groups: dict[str, list[int]] = defaultdict(list)
    for run in runs:
        where = run["provenance"]["source"]
        assert pattern.fullmatch(where["locator"]), where["locator"]
        if "address" not in source:  # else the author's address template (an archive's)
            assert where["url"] == f"{source['url']}/blob/{source['revision']}/{where['locator']}"
        else:
            assert where["url"].startswith(f"{source['url']}/blob/{source['revision']}/")
        assert where["terms"] == source["terms"]
        if given["keep_raw"]:
            assert [r["kind"] for r in run["raw"]] == ["output"]
        else:
            assert run["raw"] == []
            assert re.fullmatch(r"[0-9a-f]{64}", where["sha256"])
            assert run["id"].endswith(where["sha256"][:8])
        # One machine for the whole tree, or one per case (given in the cases' runs).
        machines = {given.get("run", {}).get("machine")} | {
            (case.get("run") or {}).get("machine") for case in given.get("cases") or []
        }
        assert run["machine"] in machines - {None}
        assert run["repeat"]["group"].startswith(f"{given['set']}-")
        assert bench_session(run["repeat"]) is not None
        groups[run["repeat"]["group"]].append(run["repeat"]["index"])
    # Every configuration was run the number of times the author said, once each.
    repeats = given["files"]["repeats"]
    assert {g: sorted(i) for g, i in groups.items()} == {
        g: list(range(1, repeats + 1)) for g in groups
    }
