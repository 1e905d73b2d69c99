"""The published JSON Schemas of the run file and the hardware note, and validation against
them. Problems come back as ``Problem`` values (field path, message, hint) so that callers can
place them at a file's line; nothing is raised for invalid data.

jsonschema's own messages are written for schema authors; ``_explain`` turns each kind of
violation into a sentence for a contributor, with a "did you mean" for misspelt keys and values.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import fastjsonschema
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
    """jsonschema's validator for schema ``name``. The schema itself is not checked here (that
    costs about a second per process): tests/test_schema.py checks every published schema."""
    schema = load_schema(name)
    return jsonschema.validators.validator_for(schema)(schema)


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
    "^(100(\\.0+)?|[1-9][0-9]?(\\.[0-9]+)?)%$": "a share from 1% to 100% such as '70%'",
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
    return re.split(r"\.\s+(?=[A-Z])", text)[0].rstrip(".")


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
        kinds = value if isinstance(value, list) else [value]
        if (
            "string" in kinds
            and isinstance(instance, int | float)
            and not isinstance(instance, bool)
        ):
            hint = f"quote it to make it text: '{instance}'"
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
    if kind in ("anyOf", "oneOf"):
        return _explain_alternatives(error, where, schema)
    return [Problem(where, error.message)]


def _explain_alternatives(
    error: jsonschema.ValidationError, where: str, schema: dict[str, Any]
) -> list[Problem]:
    """A value that fits none of a few alternatives (a number, a share such as "70%", null):
    what is wrong with it against the alternative of its own type, else which types would do;
    the hint is the property's description."""
    hint = _first_sentence(schema.get("description"))
    context = list(error.context or [])
    same_type = [e for e in context if e.validator != "type"]
    if same_type:
        return [Problem(p.field, p.message, p.hint or hint) for p in _explain(same_type[0])]
    kinds = [
        k
        for e in context
        for k in (e.validator_value if isinstance(e.validator_value, list) else [e.validator_value])
    ]
    return [Problem(where, f"expected {_types(kinds)}, got {_shown(error.instance)}", hint)]


# ---------------------------------------------------------------------------------------------
# The yes/no check. jsonschema is the authority and explains every problem, but walking a
# valid 200-field document with it costs several milliseconds; fastjsonschema compiles the
# schema into Python once per process (0.2-0.3 s) and answers "valid?" in a quarter of a
# millisecond, so only invalid files pay for jsonschema. A process that checks only a few
# documents (``kb import``, ``kb check FILE``) asks jsonschema and never compiles.
# tests/test_schema.py holds the two to the same answers; docs/performance.md has the
# measurement against the hand-compiled check this replaced.

Check = Callable[[Any], bool]
#: Documents of one schema checked by jsonschema itself before the schema is compiled:
#: compiling costs about as much as checking this many that way.
COMPILE_AFTER = 16
_checked: dict[str, int] = {}


def is_valid(name: str, data: Any) -> bool:
    """Whether ``data`` is valid against schema ``name``, by the cheaper way for this process
    (jsonschema for its first ``COMPILE_AFTER`` documents, the compiled check after)."""
    seen = _checked.get(name, 0)
    if seen < COMPILE_AFTER:
        _checked[name] = seen + 1
        return _validator(name).is_valid(data)
    return compiled(name)(data)


@cache
def compiled(name: str) -> Check:
    """A fast yes/no check equivalent to validating against schema ``name``."""
    # fastjsonschema rewrites the references of the schema it is given: give it a copy. It
    # would also fill in the schema's defaults (``use_default``): the data must stay as read.
    check = fastjsonschema.compile(copy.deepcopy(load_schema(name)), use_default=False)

    def valid(data: Any) -> bool:
        try:
            check(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return valid


def _sort_key(error: jsonschema.ValidationError) -> list[str]:
    return [str(p) for p in error.absolute_path]


def _counts(error: jsonschema.ValidationError, partial: bool) -> bool:
    """Whether ``error`` is a problem; a partial document (declared metadata, which the rest
    of the run completes) may lack required keys and the conditions on the whole run."""
    if not partial:
        return True
    return error.validator != "required" and list(error.schema_path)[:1] != ["allOf"]


def validate(name: str, data: Any, *, partial: bool = False) -> list[Problem]:
    """Every schema violation of ``data``, in document order of the fields.

    With ``partial``, ``data`` is part of a document (what a person declared for a run): the
    values it has must fit, but required keys may be missing."""
    if is_valid(name, data):
        return []
    validator = _validator(name)
    problems: list[Problem] = []
    errors = (e for e in validator.iter_errors(data) if _counts(e, partial))
    for error in sorted(errors, key=_sort_key):
        for problem in _explain(error):
            field = problem.field or "(top)"
            placed = Problem(field, problem.message, problem.hint, problem.severity)
            if all((p.field, p.message) != (field, problem.message) for p in problems):
                problems.append(placed)
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
