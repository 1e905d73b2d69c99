"""The published schemas: well formed, documented, closed; the example and the empty shape fit
them; the compiled fast check gives jsonschema's answer."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgbench_kb.runs.build import skeleton
from pgbench_kb.runs.runfile import load_yaml_file, load_yaml_text
from pgbench_kb.runs.schema import SCHEMA_NAMES, compiled, load_schema, validate, validate_run

ROOT = Path(__file__).resolve().parents[1]
BAD = ROOT / "tests" / "check" / "bad"
GOOD = ROOT / "tests" / "check" / "good"


def properties_of(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every (dotted path, schema) of a named property, anywhere in the schema."""
    found = []
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            found.append((f"{path}.{name}".lstrip("."), prop))
        for key, value in node.items():
            if key == "allOf":  # conditional constraints, not properties of their own
                continue
            if key == "properties" and isinstance(value, dict):
                for name, prop in value.items():
                    found += properties_of(prop, f"{path}.{name}".lstrip("."))
            elif isinstance(value, dict | list):
                found += properties_of(value, f"{path}.{key}" if key != "properties" else path)
    elif isinstance(node, list):
        for item in node:
            found += properties_of(item, path)
    return found


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["properties"]["schema_version"]["const"] == 1


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_property_has_a_description(name: str) -> None:
    undocumented = [
        p for p, prop in properties_of(load_schema(name)) if not prop.get("description")
    ]
    assert undocumented == []


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_object_is_closed(name: str) -> None:
    """Unknown keys are rejected everywhere, except the open maps (settings, fs_properties)."""

    def objects(node: Any, path: str) -> list[str]:
        open_ = []
        if isinstance(node, dict):
            if node.get("properties") and node.get("additionalProperties") is not False:
                open_.append(path)
            for key, value in node.items():
                if key != "allOf":  # conditional constraints narrow closed objects
                    open_ += objects(value, f"{path}/{key}")
        elif isinstance(node, list):
            for index, item in enumerate(node):
                open_ += objects(item, f"{path}/{index}")
        return open_

    assert objects(load_schema(name), "") == []


def test_enums_hold_the_historical_vocabulary() -> None:
    defs = load_schema("run")["$defs"]
    levels = defs["array"]["properties"]["level"]["enum"]
    for level in (
        "single",
        "raid0",
        "raid1",
        "raid5",
        "raid6",
        "raid10",
        "zfs-mirror",
        "zfs-raidz",
    ):
        assert level in levels
    for media in ("hdd", "ssd", "nvme", "virtual"):
        assert media in defs["array"]["properties"]["media"]["enum"]
    statistic = load_schema("run")["properties"]["results"]["properties"]["statistic"]["enum"]
    assert statistic == ["single", "median", "mean"]
    network = load_schema("run")["properties"]["client"]["properties"]["network"]["enum"]
    for link in ("local-socket", "loopback-tcp", "100mbit", "1gbit"):
        assert link in network


def test_the_annotated_example_is_valid() -> None:
    example = load_yaml_file(ROOT / "docs" / "run-file-example.yaml").data
    assert validate_run(example) == []


def test_skeleton_has_every_property_of_its_sections() -> None:
    """runs.build.skeleton() is the whole empty shape: no property of the schema is left out."""
    shape = skeleton()
    schema = load_schema("run")
    for section in (
        "provenance",
        "server",
        "client",
        "storage",
        "postgres",
        "benchmark",
        "results",
        "server_stats",
    ):
        node = schema["properties"][section]
        assert set(shape[section]) == set(node["properties"]), section
    for volume in ("data", "wal"):
        ref = schema["$defs"][volume if volume == "wal" else "volume"]
        assert set(shape["storage"][volume]) == set(ref["properties"])


def test_filled_skeleton_is_valid() -> None:
    run = skeleton()
    run.update(
        {
            "id": "x",
            "machine": "box",
            "raw": [{"path": "data/raw/x.txt", "sha256": "0" * 64, "kind": "output"}],
        }
    )
    run["provenance"]["recorded_at"] = "2026-11-22"
    assert validate_run(run) == []


def test_transcribed_run_without_raw_is_valid() -> None:
    run = load_yaml_file(GOOD / "transcribed-figures.yaml").data
    assert run["raw"] == [] and validate_run(run) == []


def test_a_transcribed_run_needs_a_titled_source() -> None:
    run = load_yaml_file(GOOD / "transcribed-figures.yaml").data
    del run["provenance"]["source"]["title"]
    assert [(p.field, p.message) for p in validate_run(run)] == [
        ("provenance.source.title", "missing (required)")
    ]


# --- the compiled check must agree with jsonschema


@cache
def jsonschema_run() -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(load_schema("run"))


@cache
def corpus_documents() -> list[Any]:
    docs = []
    for path in sorted([*BAD.glob("*.yaml"), *GOOD.glob("*.yaml"), *BAD.glob("*/*.yaml")]):
        try:
            docs.append(load_yaml_text(path.read_text(encoding="utf-8"), path=str(path)).data)
        except Exception:  # unreadable cases never reach the schema
            continue
    return docs


@pytest.mark.parametrize("index", range(len(corpus_documents())))
def test_compiled_check_agrees_on_the_corpus(index: int) -> None:
    data = corpus_documents()[index]
    assert compiled("run")(data) == jsonschema_run().is_valid(data)


LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2, allow_nan=False),
    st.sampled_from(["", "raid10", "ssd", "x", "2026-01-01", "data/raw/a", "0" * 64]),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.sampled_from(["a", "tps"]), st.integers(), max_size=1),
)


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _paths(value, (*prefix, index))
    return found


BASE = load_yaml_file(GOOD / "measured-tpcb.yaml").data
BASE_PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(BASE_PATHS), LEAVES, st.booleans())
def test_compiled_check_agrees_on_mutations(path: tuple, value: Any, delete: bool) -> None:
    doc = copy.deepcopy(BASE)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if delete and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = value
    expected = jsonschema_run().is_valid(doc)
    assert compiled("run")(doc) == expected, json.dumps(path)
    assert (validate("run", doc) == []) == expected


def test_the_first_documents_are_asked_of_jsonschema_then_the_compiled_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A command that checks one file does not pay for compiling the schema (0.2-0.3 s); one
    that checks many compiles it once; the answers are the same either way."""
    from pgbench_kb.runs import schema

    monkeypatch.setattr(schema, "_checked", {})
    bad = copy.deepcopy(BASE)
    bad["benchmark"]["clients"] = "many"
    answers = [schema.is_valid("run", doc) for doc in [BASE, bad] * schema.COMPILE_AFTER]
    assert schema._checked["run"] == schema.COMPILE_AFTER
    assert answers == [True, False] * schema.COMPILE_AFTER
    assert validate("run", bad) and not validate("run", BASE)
