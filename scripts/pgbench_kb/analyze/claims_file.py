"""``data/claims.yaml``: read, validated against its published schema
(``runs/schemas/claims.schema.json``, by the code that validates run files) and by the one rule
the schema cannot say: a figure's ``[low, high]`` range has two numbers, low first.

``claims_problems`` returns every problem (``kb check``); ``load_claims`` raises the first as a
located ``RunFileError`` (``kb compare``, ``kb derive``). What the claims say is checked against
the runs by ``analyze/claims.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.documents import Located, document_problems, read_document, schema_problems
from pgbench_kb.runs.runfile import Loaded

CLAIMS_FILE = Path("data/claims.yaml")


def _ranges(loaded: Loaded, shown: str) -> list[Located]:
    """A figure's range is ``[low, high]``: two numbers, low first."""
    found = []
    for i, claim in enumerate(loaded.data["claims"]):
        for j, figure in enumerate((claim.get("expects") or {}).get("figures") or []):
            for side in ("a", "b"):
                value = figure[side]
                if isinstance(value, list) and (len(value) != 2 or value[0] > value[1]):
                    field = f"claims.{i}.expects.figures.{j}.{side}"
                    found.append(
                        Located(
                            shown,
                            loaded.line_of(field),
                            field,
                            "expected a number or a [low, high] range",
                            "e.g. 1500 or [300, 400]",
                        )
                    )
    return found


def _problems(loaded: Loaded, shown: str) -> list[Located]:
    return schema_problems("claims", loaded, shown) or _ranges(loaded, shown)


def claims_problems(path: Path, shown: str) -> list[Located]:
    """Every problem of the claims file at ``path``, in line order."""
    return document_problems("claims", path, shown, _ranges)


def load_claims(root: Path) -> list[dict[str, Any]]:
    """The claims of ``ROOT/data/claims.yaml`` (none when the file is absent)."""
    path = root / CLAIMS_FILE
    if not path.exists():
        return []
    shown = CLAIMS_FILE.as_posix()
    loaded = read_document(path, shown)
    found = _problems(loaded, shown)
    if found:
        first = found[0]
        raise RunFileError(
            first.message, path=shown, line=first.line, field=first.field, hint=first.hint
        )
    return loaded.data["claims"]
