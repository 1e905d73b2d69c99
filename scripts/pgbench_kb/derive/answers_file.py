"""``data/answers.yaml``: read, validated against its published schema
(``runs/schemas/answers.schema.json``, by the code that validates run files) and by the rules
the schema cannot say: each slug once, families that are comparison families
(``knowledge.FAMILIES``), sets of a known family, and every ``[key]`` a mechanism cites listed
under ``cites``.

``answers_problems`` returns every problem (``kb check``); ``read_answers`` raises the first as
a located ``DeriveError`` (``kb derive``). What the leads say is filled and checked against the
analysis by ``derive/answer_pages.py``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pgbench_kb.derive import knowledge
from pgbench_kb.errors import DeriveError
from pgbench_kb.runs.documents import Located, document_problems, read_document, schema_problems
from pgbench_kb.runs.runfile import Loaded

ANSWERS_FILE = Path("data") / "answers.yaml"
#: ``[key]`` in a mechanism: a citation of ``cites``.
CITATION = re.compile(r"\[([a-z0-9-]+)\]")


def answer_error(loaded: Loaded, field: str, message: str, hint: str) -> DeriveError:
    """A located error of the answers file, at ``field``'s line."""
    return DeriveError(
        message, path=str(ANSWERS_FILE), line=loaded.line_of(field), field=field, hint=hint
    )


def _rules(loaded: Loaded, shown: str) -> list[Located]:
    families = {slug for slug, *_ in knowledge.FAMILIES}
    known = ", ".join(sorted(families))
    cites = loaded.data.get("cites") or {}
    found = []

    def at(field: str, message: str, hint: str) -> None:
        found.append(Located(shown, loaded.line_of(field), field, message, hint))

    seen: set[str] = set()
    for i, answer in enumerate(loaded.data["answers"]):
        where = f"answers.{i}"
        slug = answer["slug"]
        if slug in seen:
            at(f"{where}.slug", f"slug {slug!r} is not unique", "use each slug once per file")
        seen.add(slug)
        for j, family in enumerate(answer["families"]):
            if family not in families:
                at(
                    f"{where}.families.{j}",
                    f"unknown comparison family {family!r}",
                    f"use one of {known}",
                )
        for name, spec in (answer.get("sets") or {}).items():
            if spec["family"] not in families:
                at(
                    f"{where}.sets.{name}.family",
                    f"set {name!r} has no known family",
                    f"give it family: one of {known}",
                )
        for name in CITATION.findall(answer["why"]):
            if name not in cites:
                at(
                    f"{where}.why",
                    f"the mechanism cites [{name}], which `cites` does not list",
                    f"add {name} under cites, or cite a listed source",
                )
    return found


def _problems(loaded: Loaded, shown: str) -> list[Located]:
    return schema_problems("answers", loaded, shown) or _rules(loaded, shown)


def answers_problems(path: Path, shown: str) -> list[Located]:
    """Every problem of the answers file at ``path``, in line order."""
    return document_problems("answers", path, shown, _rules)


def read_answers(root: Path) -> Loaded:
    """``ROOT/data/answers.yaml`` and its lines, checked (no answers when it is absent)."""
    path = root / ANSWERS_FILE
    if not path.is_file():
        return Loaded({"answers": [], "sources": {}, "cites": {}}, {})
    shown = ANSWERS_FILE.as_posix()
    loaded = read_document(path, shown)
    found = _problems(loaded, shown)
    if found:
        first = found[0]
        raise DeriveError(
            first.message, path=shown, line=first.line, field=first.field, hint=first.hint
        )
    return loaded


def load_answers(root: Path) -> dict[str, Any]:
    """The data of ``ROOT/data/answers.yaml``, checked."""
    return read_answers(root).data
