"""The contributed YAML files other than run files that have a published schema: bench profiles
(``profile.schema.json``), ``data/claims.yaml`` (``claims.schema.json``) and
``data/answers.yaml`` (``answers.schema.json``).

Each is read by the loader run files use (``runs.runfile``: safe, bounded, with the line of
every key) and validated by the code that validates run files (``runs.schema.validate``); every
problem comes back as a ``Located`` value, ``path:line: field: message (hint)``, so ``kb check``
reports it and ``kb plan``, ``kb compare`` and ``kb derive`` raise it the same way.

What a schema cannot say (one key against another, a file that must exist, names once each)
belongs to the file's owner, which reports it as ``Located`` too: ``bench/profile/key_rules.py``,
``analyze/claims_file.py``, ``derive/answers_file.py``. ``kb check`` is handed those checks by
``cli`` (``runs`` never imports the stages that own them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.runfile import Loaded, load_yaml_text, read_text_file

#: The schemas of the documents, by name (``runs/schemas/NAME.schema.json``).
DOCUMENT_SCHEMAS = ("profile", "claims", "answers")


@dataclass(frozen=True)
class Located:
    """One problem of a document, at its line."""

    path: str
    line: int | None
    field: str
    message: str
    hint: str | None = None

    def text(self) -> str:
        """The message with its hint, as one line."""
        return self.message if not self.hint else f"{self.message} ({self.hint})"


def read_document(path: Path, shown: str) -> Loaded:
    """The data and key lines of a YAML document (``RunFileError`` when it cannot be read)."""
    return load_yaml_text(read_text_file(path), path=shown)


def _non_finite(data: Any, where: str = "") -> Iterator[str]:
    """The dotted paths of the numbers that are not finite (the loader refuses ``.nan`` and
    ``.inf`` already; this holds for data that came another way)."""
    if isinstance(data, float) and not math.isfinite(data):
        yield where or "(top)"
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _non_finite(value, f"{where}.{key}" if where else str(key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _non_finite(value, f"{where}.{index}" if where else str(index))


def schema_problems(name: str, loaded: Loaded, shown: str) -> list[Located]:
    """Every problem of ``loaded`` against schema ``name``, in line order (a number that is
    not finite is the only problem said of its data: the schema's bounds do not hold NaN)."""
    located = [
        Located(shown, loaded.line_of(field), field, "is not a finite number", "write the figure")
        for field in _non_finite(loaded.data)
    ]
    if located:
        return located
    # Imported here: bench/sampling.py, run beside every trial, imports the profile's model and
    # must not pay for jsonschema.
    from pgbench_kb.runs.schema import validate

    located = [
        Located(shown, loaded.line_of(p.field), p.field, p.message, p.hint)
        for p in validate(name, loaded.data)
    ]
    return sorted(located, key=lambda p: p.line or 0)


#: A check of one document: its path and the name to show → every problem (schema and rules).
DocumentCheck = Callable[[Path, str], list[Located]]


def document_problems(
    name: str, path: Path, shown: str, rules: Callable[[Loaded, str], list[Located]]
) -> list[Located]:
    """Every problem of the document at ``path`` against schema ``name``, in line order; its
    ``rules`` (what the schema cannot say) only once the schema holds. A file that cannot be
    read is one problem."""
    try:
        loaded = read_document(path, shown)
    except RunFileError as exc:
        return [Located(shown, exc.line, exc.field or "(file)", exc.message, exc.hint)]
    return schema_problems(name, loaded, shown) or rules(loaded, shown)


@dataclass(frozen=True)
class DocumentKind:
    """A kind of document ``kb check`` validates: where it lives and how it is checked."""

    #: What the report calls it (``profile``, ``claims``, ``answers``).
    name: str
    #: Where the documents are, as globs from the project's root.
    places: tuple[str, ...]
    check: DocumentCheck

    def paths(self, root: Path) -> list[Path]:
        found: set[Path] = set()
        for place in self.places:
            found.update(p for p in root.glob(place) if p.is_file() and not p.is_symlink())
        return sorted(found)
