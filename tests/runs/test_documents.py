"""The published schemas of bench profiles, data/claims.yaml and data/answers.yaml: well formed,
documented, checked by the run files' code (runs.schema) and reported by `kb check` as
`path:line: field: message`, like run files.

Issue 34 (item 3): these files had three hand-written validators beside the JSON-Schema path;
the tests below hold the one path to what they checked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from kbtest import REPO, run_kb
from pgbench_kb.analyze.claims import METRICS
from pgbench_kb.bench.profile import BUILTINS, PROFILES_DIR
from pgbench_kb.runs.documents import DOCUMENT_SCHEMAS
from pgbench_kb.runs.schema import compiled, load_schema, validate

SHIPPED = {
    "profile": sorted([*PROFILES_DIR.glob("*.yaml"), *PROFILES_DIR.glob("campaign/*.yaml")]),
    "claims": [REPO / "data" / "claims.yaml"],
    "answers": [REPO / "data" / "answers.yaml"],
}


def _properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    found = []
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            found.append((f"{path}.{name}", prop))
        for key, value in node.items():
            found += _properties(value, f"{path}/{key}")
    elif isinstance(node, list):
        for item in node:
            found += _properties(item, path)
    return found


@pytest.mark.parametrize("name", DOCUMENT_SCHEMAS)
def test_document_schema_is_valid_and_every_property_described(name: str) -> None:
    schema = load_schema(name)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["description"]
    # Conditions (allOf, if/then) narrow properties described where they are declared.
    undescribed = [
        p
        for p, prop in _properties(schema)
        if not prop.get("description") and "/allOf" not in p and "/then" not in p
    ]
    assert undescribed == []


@pytest.mark.parametrize("name", DOCUMENT_SCHEMAS)
def test_every_document_object_is_closed(name: str) -> None:
    """Unknown keys are errors everywhere (a misspelt key is named, with "did you mean")."""

    def open_objects(node: Any, path: str) -> list[str]:
        found = []
        if isinstance(node, dict):
            if node.get("properties") and node.get("additionalProperties") is not False:
                found.append(path)
            for key, value in node.items():
                if key != "allOf":  # conditions narrow closed objects
                    found += open_objects(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, item in enumerate(node):
                found += open_objects(item, f"{path}/{index}")
        return found

    assert open_objects(load_schema(name), "") == []


@pytest.mark.parametrize("name", DOCUMENT_SCHEMAS)
def test_shipped_documents_fit_their_schema(name: str) -> None:
    for path in SHIPPED[name]:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert validate(name, data) == [], path


BAD = {
    "profile": [
        {"description": "x", "scales": [2, 0], "clients": 2, "workloads": ["tpcb-like"]},
        {"description": "x", "scales": 2, "clients": 2, "workloads": [{"name": "m"}]},
        {"description": "x", "scales": 2, "clients": 2, "workloads": "x", "threads": "some"},
        {"description": "x", "scales": 2, "clients": 2, "workloads": "x", "workload": 1},
    ],
    "claims": [
        {"schema_version": 1, "claims": [{"id": "x", "claim": "c", "kind": "ranking"}]},
        {
            "schema_version": 1,
            "claims": [{"id": "x", "claim": "c", "kind": "groups", "concerns": {"a": {}}}],
        },
    ],
    "answers": [
        {"schema_version": 1, "answers": [{"slug": "a"}]},
        {"schema_version": 2, "answers": []},
    ],
}


@pytest.mark.parametrize("name", DOCUMENT_SCHEMAS)
def test_the_compiled_check_agrees_with_jsonschema(name: str) -> None:
    """The fast yes/no check of runs.schema must know every keyword these schemas use and
    give jsonschema's answer on good and bad documents alike."""
    check = compiled(name)
    validator = jsonschema.Draft202012Validator(load_schema(name))
    documents = [yaml.safe_load(p.read_text(encoding="utf-8")) for p in SHIPPED[name]]
    for data in [*documents, *BAD[name]]:
        assert check(data) == validator.is_valid(data), data
    assert all(not check(data) for data in BAD[name])


def test_closed_lists_match_the_code() -> None:
    """The schemas' enums are the code's lists: a new builtin or metric is added to both."""
    profile = load_schema("profile")
    assert tuple(profile["$defs"]["script"]["properties"]["builtin"]["enum"]) == BUILTINS
    assert tuple(profile["$defs"]["workload"]["then"]["enum"]) == BUILTINS
    figure = load_schema("claims")["$defs"]["figure"]["properties"]["metric"]
    assert set(figure["enum"]) == set(METRICS)


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "kb"
    for folder in ("data/runs", "content/hardware", "scripts/profiles/campaign"):
        (root / folder).mkdir(parents=True)
    return root


def test_kb_check_reports_profiles_claims_and_answers_at_their_lines(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "scripts/profiles/bad.yaml").write_text(
        "description: x\nscales: [2, 0]\nclients: 4\nworkload: [tpcb-like]\nduration_s: 2\n",
        encoding="utf-8",
    )
    (root / "scripts/profiles/campaign/both.yaml").write_text(
        "description: x\nscales: 4\nclients: 4\nworkloads: select-only\nduration_s: 2\n"
        "transactions: 9\n",
        encoding="utf-8",
    )
    (root / "data/claims.yaml").write_text(
        "schema_version: 1\nclaims:\n- id: x\n  claim: C.\n  concerns: {machine: m, factor: "
        "a.b, a: 1}\n  expects: {direction: down}\n",
        encoding="utf-8",
    )
    (root / "data/answers.yaml").write_text(
        "schema_version: 1\nanswers:\n- slug: a\n  title: T\n  label: L\n  families: [raid]\n"
        "  lead: x\n  why: y [z]\n",
        encoding="utf-8",
    )
    done = run_kb("check", "--root", str(root))
    assert done.returncode == 1
    shown = done.stdout.replace(str(root), "ROOT")
    assert shown == (
        "ROOT/scripts/profiles/bad.yaml:1: workloads: missing (required) (What pgbench runs: "
        "a list of builtin names (tpcb-like, simple-update, select-only) or {name, scripts} "
        "mappings)\n"
        "ROOT/scripts/profiles/bad.yaml:2: scales.1: 0 is below the minimum 1\n"
        "ROOT/scripts/profiles/bad.yaml:4: workload: unknown key (did you mean 'workloads'?)\n"
        "ROOT/scripts/profiles/campaign/both.yaml:6: transactions: give only one of duration_s "
        "(pgbench -T) and transactions (pgbench -t) (remove one of them)\n"
        "ROOT/data/claims.yaml:5: claims.0.concerns.b: missing (required)\n"
        "ROOT/data/claims.yaml:6: claims.0.expects.direction: 'down' is not one of: higher, "
        "lower, unchanged\n"
        "ROOT/data/answers.yaml:6: answers.0.families.0: unknown comparison family 'raid' (use "
        "one of checkpoints, clients, commit-delay, commit-flush, durability, filesystem, "
        "machines, memory, os, other, other-settings, postgres-version, query-mode, raid-level, "
        "storage-layout, "
        "tuning-steps, wal-placement, workload, write-cache)\n"
        "ROOT/data/answers.yaml:8: answers.0.why: the mechanism cites [z], which `cites` does "
        "not list (add z under cites, or cite a listed source)\n"
        "checked 0 run file(s), 0 hardware note(s) and 4 other file(s) (profiles, claims, "
        "answers): 8 error(s), 0 warning(s)\n"
    )


def test_kb_check_of_a_named_profile_checks_it_as_a_profile(tmp_path: Path) -> None:
    """A profile named on the command line (or a folder of them, or data/ with claims.yaml) is
    checked as a profile, not as a run file."""
    root = _project(tmp_path)
    good = root / "scripts/profiles/good.yaml"
    good.write_text((PROFILES_DIR / "smoke.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (root / "data/claims.yaml").write_text("schema_version: 1\nclaims: []\n", encoding="utf-8")
    for named in (good, good.parent, root / "data"):
        # a folder holding profiles or data files checks them as such, never as run files
        done = run_kb("check", "--root", str(root), str(named))
        assert (done.returncode, done.stdout) == (
            0,
            "checked 0 run file(s), 0 hardware note(s) and 1 other file(s) (profiles, claims, "
            "answers): 0 error(s), 0 warning(s)\n",
        )


def test_the_shipped_documents_pass_kb_check() -> None:
    named = [str(p) for paths in SHIPPED.values() for p in paths]
    done = run_kb("check", "--root", str(REPO), *named)
    assert done.returncode == 0, done.stdout
    assert done.stdout.endswith(
        f"and {len(named)} other file(s) (profiles, claims, answers): 0 error(s), 0 warning(s)\n"
    )
