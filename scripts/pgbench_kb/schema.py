"""The published JSON Schemas of the run file and the hardware note, and validation against
them. Problems come back as ``Problem`` values (field path, message, hint) so that callers can
place them at a file's line; nothing is raised for invalid data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMAS_DIR = Path(__file__).resolve().parent / "schemas"


@dataclass(frozen=True)
class Problem:
    field: str
    message: str
    hint: str | None = None
    severity: str = "error"


@cache
def load_schema(name: str) -> dict[str, Any]:
    """``run`` or ``hardware``: the schema as published in ``schemas/NAME.schema.json``."""
    return json.loads((SCHEMAS_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@cache
def _validator(name: str) -> jsonschema.protocols.Validator:
    schema = load_schema(name)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _dotted(path: Any) -> str:
    return ".".join(str(p) for p in path)


def validate(name: str, data: Any) -> list[Problem]:
    """Every schema violation of ``data``, in document order."""
    problems = []
    for error in sorted(_validator(name).iter_errors(data), key=lambda e: list(map(str, e.path))):
        problems.append(
            Problem(field=_dotted(error.absolute_path) or "(top)", message=error.message)
        )
    return problems


def validate_run(run: Any) -> list[Problem]:
    return validate("run", run)
