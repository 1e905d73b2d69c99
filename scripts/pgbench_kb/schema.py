"""The published JSON Schemas of the run file and the hardware note, and validation against
them. Problems come back as ``Problem`` values (field path, message, hint) so that callers can
place them at a file's line; nothing is raised for invalid data.

jsonschema's own messages are written for schema authors; ``_explain`` turns each kind of
violation into a sentence for a contributor, with a "did you mean" for misspelt keys and values.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"
SCHEMA_NAMES = ("run", "hardware")


@dataclass(frozen=True)
class Problem:
    field: str
    message: str
    hint: str | None = None
    severity: str = "error"

    def text(self) -> str:
        """The message with its hint, as one line."""
        return self.message if not self.hint else f"{self.message} ({self.hint})"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """``run`` or ``hardware``: the schema as published in ``schemas/NAME.schema.json``."""
    return json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


TYPE_NAMES = {
    "number": "a number",
    "integer": "a whole number",
    "string": "text",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}

PATTERN_NAMES = {
    "^[a-z0-9][a-z0-9-]*$": "a slug (lower-case letters, digits and '-')",
    "^[0-9a-f]{64}$": "a sha256 (64 lower-case hex digits)",
    "^https?://": "an http(s) address",
    "^data/raw/[A-Za-z0-9._/-]+$": "a path under data/raw/",
    "^[A-Za-z0-9][A-Za-z0-9-]*$": "an id (letters, digits and '-')",
    "^[a-z_][a-z0-9_]*(\\.[a-z0-9_]+)*$": "a dotted field path such as storage.wal.placement",
    "^[a-z_][a-z0-9_.]*$": "a setting name (lower-case, as in postgresql.conf)",
}
DATE_HINT = "write an ISO 8601 date or time: 2026-11-22T10:15:00Z, 2006-06-01, 2006-06 or 2006"


def _dotted(path: Iterable[Any]) -> str:
    return ".".join(str(p) for p in path)


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _shown(value: Any) -> str:
    """A value as a contributor wrote it in YAML, kept short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:37] + "…"


def _types(expected: Any) -> str:
    kinds = expected if isinstance(expected, list) else [expected]
    names = [TYPE_NAMES.get(k, k) for k in kinds if k != "null"]
    text = " or ".join(names)
    return f"{text} or null" if "null" in kinds and names else text


def _first_sentence(text: str | None) -> str | None:
    if not text:
        return None
    return text.split(". ")[0].rstrip(".")


def _did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    if not matches and isinstance(word, str):
        folded = {c.replace("-", "").replace("_", "").lower(): c for c in choices}
        key = word.replace("-", "").replace("_", "").replace("+", "").replace(" ", "").lower()
        matches = [folded[key]] if key in folded else []
    return f"did you mean {matches[0]!r}?" if matches else None


def _explain(error: jsonschema.ValidationError) -> list[Problem]:
    """One or more contributor-facing problems for one jsonschema error."""
    where = _dotted(error.absolute_path)
    kind = error.validator
    value = error.validator_value
    instance = error.instance
    schema = error.schema if isinstance(error.schema, dict) else {}
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties", {}))
        extras = [k for k in instance if k not in allowed]
        return [
            Problem(
                _join(where, str(key)),
                "unknown key",
                _did_you_mean(str(key), allowed)
                or ("allowed here: " + ", ".join(allowed) if allowed else None),
            )
            for key in extras
        ]
    if kind == "required":
        match = re.match(r"^'(.+)' is a required property$", error.message)
        name = match.group(1) if match else str(value)
        described = (schema.get("properties", {}).get(name) or {}).get("description")
        hint = _first_sentence(described)
        if list(error.relative_schema_path)[:1] == ["allOf"]:
            hint = "a transcribed run names its source: title, kind and year"
        return [Problem(_join(where, name), "missing (required)", hint)]
    if kind == "type":
        hint = None
        if list(error.schema_path)[:1] == ["allOf"]:
            hint = "a transcribed run names its source: title, kind and year"
        return [Problem(where, f"expected {_types(value)}, got {_shown(instance)}", hint)]
    if kind == "enum":
        allowed = [v for v in value if v is not None]
        listed = ", ".join(str(v) for v in allowed) + (", or null" if None in value else "")
        hint = _did_you_mean(str(instance), [str(v) for v in allowed])
        return [Problem(where, f"{_shown(instance)} is not one of: {listed}", hint)]
    if kind == "const":
        if where == "schema_version":
            return [
                Problem(
                    where,
                    f"version {_shown(instance)} is not supported; this kb reads version {value}",
                    "write schema_version: 1, or update pgbench-kb if the file is newer",
                )
            ]
        return [Problem(where, f"must be {_shown(value)}, got {_shown(instance)}")]
    if kind == "minimum":
        return [Problem(where, f"{_shown(instance)} is below the minimum {value}")]
    if kind == "exclusiveMinimum":
        return [Problem(where, f"must be greater than {value}, got {_shown(instance)}")]
    if kind == "maximum":
        return [Problem(where, f"{_shown(instance)} is above the maximum {value}")]
    if kind == "pattern":
        if "[T ]" in str(value):
            return [Problem(where, f"{_shown(instance)} is not a date or time", DATE_HINT)]
        name = PATTERN_NAMES.get(str(value), f"in the form {value}")
        return [Problem(where, f"{_shown(instance)} is not {name}")]
    if kind == "minItems":
        if where == "raw":
            return [
                Problem(
                    where,
                    "a measured run needs its raw output",
                    "import it with `kb import OUTPUT …` so the raw copy and its sha256 are kept",
                )
            ]
        return [Problem(where, f"needs at least {value} item(s)")]
    if kind == "uniqueItems":
        return [Problem(where, "lists the same item twice")]
    if kind == "minLength":
        return [Problem(where, "must not be empty")]
    if kind == "maxLength":
        return [Problem(where, f"is longer than {value} characters")]
    if kind == "propertyNames":
        return [Problem(where, error.message)]
    return [Problem(where, error.message)]


def _sort_key(error: jsonschema.ValidationError) -> list[str]:
    return [str(p) for p in error.absolute_path]


def validate(name: str, data: Any) -> list[Problem]:
    """Every schema violation of ``data``, in document order of the fields."""
    validator = _validator(name)
    if validator.is_valid(data):
        return []
    problems: list[Problem] = []
    for error in sorted(validator.iter_errors(data), key=_sort_key):
        for problem in _explain(error):
            field = problem.field or "(top)"
            problems.append(Problem(field, problem.message, problem.hint, problem.severity))
    return problems


def validate_run(run: Any) -> list[Problem]:
    return validate("run", run)


def validate_hardware(front: Any) -> list[Problem]:
    return validate("hardware", front)


def property_at(name: str, dotted: str) -> dict[str, Any] | None:
    """The schema of the property at ``dotted`` (list indexes skipped), refs resolved."""
    root = load_schema(name)
    node: dict[str, Any] | None = root
    for part in dotted.split("."):
        node = _resolve(root, node)
        if node is None:
            return None
        if part.isdigit() and "items" in node:
            node = node["items"]
            continue
        node = (node.get("properties") or {}).get(part)
        if node is None:
            return None
    return _resolve(root, node)


def _resolve(root: dict[str, Any], node: dict[str, Any] | None) -> dict[str, Any] | None:
    if node is None or "$ref" not in node:
        return node
    target: Any = root
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return merged
