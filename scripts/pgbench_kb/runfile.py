"""Run files on disk: safe loading with line numbers, stable dumping, and atomic, no-overwrite
writes. What a run file must contain is the schema's business (``schema.py``); this module only
moves them between disk and memory without losing anything.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pgbench_kb.errors import RunFileError

RUNS_DIR = Path("data/runs")
RAW_DIR = Path("data/raw")
HARDWARE_DIR = Path("content/hardware")
SCHEMA_VERSION = 1

HEADER = (
    "# pgbench-kb run file (schema_version {version}). Written once by `kb import`;\n"
    "# the format is described in docs/data-format.md. Check with `kb check PATH`.\n"
)


@dataclass
class Loaded:
    """A YAML document and the line (1-based) where each dotted key path starts."""

    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, dotted: str) -> int | None:
        """The line of ``dotted`` or of its nearest parent that has one."""
        while dotted:
            if dotted in self.lines:
                return self.lines[dotted]
            dotted = dotted.rpartition(".")[0]
        return self.lines.get("")


class _LineLoader(yaml.SafeLoader):
    """A safe loader that keeps the YAML node tree so key lines can be recovered."""


def _record_lines(node: yaml.Node, prefix: str, out: dict[str, int]) -> None:
    out.setdefault(prefix, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = str(key_node.value)
            path = f"{prefix}.{key}" if prefix else key
            out[path] = key_node.start_mark.line + 1
            _record_lines(value_node, path, out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _record_lines(item, f"{prefix}.{index}" if prefix else str(index), out)


def load_yaml_text(text: str, *, path: str) -> Loaded:
    """Parse one YAML document safely; errors name the file and line."""
    try:
        loader = _LineLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return Loaded(None, {})
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "invalid YAML"
        raise RunFileError(
            f"YAML syntax error: {problem}",
            path=path,
            line=line,
            hint="fix the YAML at that line; indent with spaces, not tabs",
        ) from None
    except yaml.YAMLError as exc:
        raise RunFileError(f"YAML error: {exc}", path=path) from None
    lines: dict[str, int] = {}
    _record_lines(node, "", lines)
    return Loaded(data, lines)


def load_yaml_file(path: Path) -> Loaded:
    """Read ``path`` as UTF-8 YAML (see ``load_yaml_text``)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RunFileError(f"cannot read: {exc.strerror}", path=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise RunFileError(
            f"not UTF-8 (byte 0x{raw[exc.start]:02x})",
            path=str(path),
            line=line,
            hint="save the file as UTF-8",
        ) from None
    return load_yaml_text(text, path=str(path))


class _Dumper(yaml.SafeDumper):
    """Block style, keys in insertion order, long strings folded as literal blocks."""


def _str_presenter(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_presenter)


def dump_yaml(data: Any, *, header: str = "") -> str:
    """YAML text for ``data``: keys in the order given, no aliases, UTF-8 kept as is."""

    class _NoAliases(_Dumper):
        def ignore_aliases(self, _data: Any) -> bool:
            return True

    body = yaml.dump(
        data,
        Dumper=_NoAliases,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )
    return header + body


def dump_run(run: dict[str, Any]) -> str:
    """The text of a run file, with its header."""
    return dump_yaml(run, header=HEADER.format(version=run.get("schema_version", SCHEMA_VERSION)))


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_new_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically; refuse to replace an existing file.

    The bytes go to a temporary file in the same folder, are flushed to disk, and are then
    hard-linked into place (``link`` fails when the name exists), so a reader never sees half a
    file and an existing file is never touched.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp_name, path)
        except FileExistsError:
            raise RunFileError(
                "already exists; run files are never overwritten",
                path=str(path),
                hint="remove it first if you really mean to replace it",
            ) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
