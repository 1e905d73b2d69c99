r"""What a person declares for ``kb import`` (and for a bench, before it starts): ``--meta``,
``--set`` and ``--machine`` read and checked against the schema; dotted paths; every problem
gathered as located ``RunImportError``\ s, raised together as ``ImportProblems``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ImportProblems, RunFileError, RunImportError
from pgbench_kb.runs.check import MAX_SLUG_CHARS
from pgbench_kb.runs.runfile import Loaded, ValueRefusedError, load_yaml_file, load_yaml_text
from pgbench_kb.runs.schema import property_at, validate

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]*$")
DECLARED_DEPTH = 2
#: Run-file fields nest at most this deep; a --set key deeper than that is a mistake.
MAX_SET_DEPTH = 8
MAX_SET_KEY_CHARS = 200
SETTINGS_PREFIX = "postgres.settings."


def set_dotted(target: dict[str, Any], dotted: str, value: Any) -> None:
    """Set ``a.b.c`` in nested dicts, creating the dicts on the way. A setting name keeps its
    dots: ``postgres.settings.auto_explain.log_min_duration`` is one setting."""
    if dotted.startswith(SETTINGS_PREFIX) and len(dotted) > len(SETTINGS_PREFIX):
        keys = [*SETTINGS_PREFIX.rstrip(".").split("."), dotted[len(SETTINGS_PREFIX) :]]
    else:
        keys = dotted.split(".")
    node = target
    for key in keys[:-1]:
        if not isinstance(node.get(key), dict):
            node[key] = {}
        node = node[key]
    node[keys[-1]] = value


def _text_only(dotted: str) -> bool:
    """Whether the field at ``dotted`` holds text (or null) and never a number or true/false."""
    prop = property_at("run", dotted)
    kinds = (prop or {}).get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    return "string" in kinds and not {"number", "integer", "boolean"} & set(kinds)


def parse_set(item: str) -> tuple[str, Any]:
    """``KEY=VALUE`` → (dotted key, value read as a YAML scalar; text where the field is text)."""
    key, sep, raw_value = item.partition("=")
    key = key.strip()
    if not sep or not key or not re.fullmatch(r"[a-z_][a-z0-9_]*(\.[a-z0-9_]+)*", key):
        raise RunImportError(
            f"--set {item[:60]!r} is not KEY=VALUE",
            field="--set",
            hint="write it as --set storage.data.array.level=raid10",
        )
    depth = key.count(".") + 1
    if len(key) > MAX_SET_KEY_CHARS or (
        depth > MAX_SET_DEPTH and not key.startswith(SETTINGS_PREFIX)
    ):
        raise RunImportError(
            f"key {key[:40]}… is {depth} levels deep and {len(key)} characters long; no field "
            f"of a run file is deeper than {MAX_SET_DEPTH} levels",
            field="--set",
            hint="see docs/data-format.md for the fields",
        )
    try:
        value = load_yaml_text(raw_value, path="--set").data if raw_value.strip() else None
    except ValueRefusedError as exc:
        raise RunImportError(exc.message, field=key, hint=exc.hint) from None
    except RunFileError:
        value = raw_value
    if value is not None and not isinstance(value, str | dict | list) and _text_only(key):
        value = raw_value.strip()  # 2006 for a date, 10.10 for a version: the text as given
    return key, value


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def leaf_paths(data: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict) and value:
            paths.extend(leaf_paths(value, path))
        else:
            paths.append(path)
    return paths


def declared_paths(declared: dict[str, Any]) -> list[str]:
    """The fields a person gave, cut to two levels (``storage.data`` covers all under it)."""
    cut = {".".join(p.split(".")[:DECLARED_DEPTH]) for p in leaf_paths(declared)}
    return sorted(cut - {"machine", "origin", "schema_version", "provenance"})


def mask(run: dict[str, Any], paths: Sequence[str]) -> None:
    """Set each dotted path to null (the values are removed before anything is written)."""
    for dotted in paths:
        node: Any = run
        keys = dotted.split(".")
        for key in keys[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and keys[-1] in node:
            node[keys[-1]] = None


def declared_values(
    meta_path: Path | None, sets: Sequence[str], machine: str | None
) -> dict[str, Any]:
    """What a person gave: the --meta file, then each --set, then --machine; each value
    checked against the schema before anything uses it. Every problem is raised at once."""
    declared, problems = gather_declared(meta_path, sets, machine)
    if problems:
        raise all_problems(problems)
    return declared


def gather_declared(
    meta_path: Path | None,
    sets: Sequence[str],
    machine: str | None,
    base: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], list[RunImportError]]:
    """What a person gave, without the values that are wrong, and a located problem for each
    of those (the --meta file's line, or the --set or --machine that gave it). ``base`` holds
    what a mapping file gave (``kb import TREE``), checked beside the rest."""
    declared: dict[str, Any] = copy.deepcopy(base or {})
    meta: Loaded | None = None
    problems: list[RunImportError] = []
    if meta_path is not None:
        meta = load_yaml_file(meta_path)
        if not isinstance(meta.data, dict):
            raise RunImportError("metadata must be a YAML mapping", path=str(meta_path), line=1)
        declared = deep_merge(declared, meta.data)
    set_keys: list[str] = []
    for item in sets:
        try:
            key, value = parse_set(item)
        except RunImportError as exc:
            problems.append(exc)
            continue
        set_dotted(declared, key, value)
        set_keys.append(key)
    if machine is not None:
        problem = _slug_problem(machine)
        if problem is not None:
            problems.append(problem)
        else:
            declared["machine"] = machine
    for found in validate("run", declared, partial=True):
        from_set = any(_overlaps(found.field, k) for k in set_keys) or found.field == "machine"
        where: dict[str, Any] = {}
        if meta is not None and meta_path is not None and not from_set:
            where = {"path": str(meta_path), "line": meta.line_of(found.field)}
        problems.append(RunImportError(found.text(), field=found.field, **where))
        _drop(declared, found.field)
    return declared, problems


def _slug_problem(machine: str) -> RunImportError | None:
    if len(machine) > MAX_SLUG_CHARS:
        return RunImportError(
            f"is {len(machine)} characters long; a slug has at most {MAX_SLUG_CHARS}",
            field="machine",
            hint="name the machine shortly, e.g. --machine dl380-g4",
        )
    if not SLUG_RE.match(machine):
        return RunImportError(
            f"{machine!r} is not a slug",
            field="machine",
            hint="use lower-case letters, digits and '-', e.g. --machine dl380-g4",
        )
    return None


def _drop(declared: dict[str, Any], dotted: str) -> None:
    """Remove the value at ``dotted`` (its problem is reported; the rest is still checked)."""
    node: Any = declared
    keys = dotted.split(".")
    for index, key in enumerate(keys[:-1]):
        child = node.get(key) if isinstance(node, dict) else None
        if isinstance(child, list):  # a list with a wrong item goes as a whole
            node.pop(key, None)
            return
        if index == len(keys) - 2 and isinstance(child, dict):
            child.pop(keys[-1], None)
            return
        node = child
    if len(keys) == 1 and isinstance(node, dict):
        node.pop(keys[0], None)


def _overlaps(a: str, b: str) -> bool:
    """Whether dotted paths ``a`` and ``b`` are the same field or one holds the other."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def located_problems(
    problems: Sequence[tuple[str, str, Sequence[str]]], given: Sequence[str]
) -> list[RunImportError]:
    """Each problem found, as (field, message, related fields), located at its field; one
    that shows on another field than the one a person gave (``given``: --set keys, then --meta
    paths) — a tps given with --set that no longer matches the transactions and the duration —
    names the given field it involves."""

    def given_in(fields: Sequence[str]) -> list[str]:
        return [k for k in given if any(_overlaps(k, f) for f in fields)]

    located = []
    for field, message, related in problems:
        blamed = given_in(related) if not given_in([field]) else []
        check = f" (check the {' and '.join(blamed)} you gave)" if blamed else ""
        located.append(RunImportError(f"{message}{check}", field=field))
    return located


def all_problems(problems: Sequence[RunImportError]) -> RunImportError:
    """The one problem, or all of them together (printed one per line)."""
    return problems[0] if len(problems) == 1 else ImportProblems(list(problems))
