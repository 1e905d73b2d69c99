"""Safe YAML with line numbers: what every YAML file of the project is read with.

Loading is deliberately stricter than YAML: one document; no anchors or aliases (they would let a
small file expand into a huge one); no duplicate keys; only text keys; no tabs in indentation;
dates and times stay text (``2006-06-01`` is read as the string, as the schema expects);
nesting at most ``MAX_DEPTH`` deep; numbers at most ``MAX_NUMBER_CHARS`` long and finite. The
C loader (libyaml) parses when it is available; the data is built here, recording the line of
every key (``Loaded``). Run files are read through ``runs.runfile.read_run``, which tries the
fast reader (``runs/fastyaml.py``) first.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.bounded import read_text_file

MAX_DEPTH = 32
#: A number written with more characters than this is not a figure (and Python refuses to
#: convert integers of more than 4300 digits anyway).
MAX_NUMBER_CHARS = 40

_TAB_INDENT = re.compile(r"^ *\t", re.M)


class ValueRefusedError(RunFileError):
    """A YAML value that reads but is no figure: a non-finite number, or one far too long."""


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


class _CLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loading that keeps timestamps as text, with libyaml when available (several times
    faster than pure Python)."""


_NULL_TAG_ = "tag:yaml.org,2002:null"
_STR_TAG_ = "tag:yaml.org,2002:str"
# First characters with which a plain scalar can be anything but text (bool, int, float,
# merge, null, timestamp, value); everything else resolves to text without trying regexes.
_MAYBE_NOT_TEXT = frozenset("yYnNtTfFoO-+0123456789.<~=")
# Plain decimals YAML 1.1 reads as int or float (no leading zero: 012 is octal there).
_PLAIN_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?")


def _fast_resolve(self: Any, kind: Any, value: Any, implicit: Any) -> str:
    """``resolve`` with a shortcut for the common plain scalars (same answers, less work)."""
    if kind is yaml.ScalarNode and implicit[0]:
        if value == "null":
            return _NULL_TAG_
        if value and value[0] not in _MAYBE_NOT_TEXT:
            return _STR_TAG_
        if _PLAIN_DECIMAL.fullmatch(value):
            return _INT_TAG if "." not in value else _FLOAT_TAG
    return yaml.resolver.Resolver.resolve(self, kind, value, implicit)


def _construct_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    return loader.construct_scalar(node)


_CLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_text)
_CLoader.resolve = _fast_resolve  # type: ignore[method-assign]

_STR_TAG = "tag:yaml.org,2002:str"
_DEEP_SEQUENCE = re.compile(r"(?:-[ ]+){16}")


def _might_nest_deeply(text: str) -> bool:
    """True when the text could nest deeper than libyaml's C stack survives.

    libyaml composes recursively in C and crashes on ~100,000 levels. Flow brackets and compact
    ``- - -`` sequences are the only ways to nest that deep within the size limit, so only
    texts with many of them are measured first (``_too_deep_line``).
    """
    brackets = text.count("[") + text.count("{")
    return brackets > 2 * MAX_DEPTH or _DEEP_SEQUENCE.search(text) is not None


def _too_deep_line(text: str) -> int | None:
    """The line where the text first nests deeper than MAX_DEPTH, else None.

    It reads the parser's events, which come from a loop with a stack of its own (libyaml's
    and PyYAML's alike), not from recursion, and stops at the first collection too deep: a
    file of 10,000 brackets is refused in milliseconds instead of being composed until
    Python's recursion limit (1.5 s).
    """
    depth = -1  # the document's own collection is level 0, as in _Builder
    for event in yaml.parse(text, Loader=_CLoader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                return int(event.start_mark.line) + 1
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    return None


_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_TIME_TAG = "tag:yaml.org,2002:timestamp"
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")


class _Builder:
    """Builds the Python value of a composed node tree in one pass, recording key lines.

    It refuses what run files must not contain: aliases (an alias is the very node object its
    anchor made, so a node met twice is one; it is reported at the line of the key or item that
    refers to it), merge keys, non-text and duplicate keys, and nesting deeper than MAX_DEPTH.
    Scalars of the core tags are built directly; any other tag goes to the safe constructor.
    """

    def __init__(self, loader: Any, path: str) -> None:
        self.loader = loader
        self.path = path
        self.lines: dict[str, int] = {}
        self.seen: set[int] = set()

    def fail(self, message: str, line: int, field: str | None, hint: str | None = None) -> None:
        raise RunFileError(message, path=self.path, line=line, field=field or None, hint=hint)

    def refuse(self, message: str, node: yaml.Node, field: str, hint: str) -> None:
        raise ValueRefusedError(
            message, path=self.path, line=node.start_mark.line + 1, field=field or None, hint=hint
        )

    def build(self, node: yaml.Node, prefix: str, depth: int, line: int) -> Any:
        if id(node) in self.seen:
            self.fail(
                "YAML aliases (*name) are not allowed in run files",
                line,
                prefix,
                "write the value out in full",
            )
        if depth > MAX_DEPTH:
            self.fail(f"nested more than {MAX_DEPTH} levels deep", node.start_mark.line + 1, None)
        self.seen.add(id(node))
        self.lines.setdefault(prefix, node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node, prefix)
        if isinstance(node, yaml.MappingNode) and node.tag == "tag:yaml.org,2002:map":
            return self.mapping(node, prefix, depth)
        if isinstance(node, yaml.SequenceNode) and node.tag == "tag:yaml.org,2002:seq":
            items = []
            for index, item in enumerate(node.value):
                dotted = f"{prefix}.{index}" if prefix else str(index)
                item_line = line if id(item) in self.seen else item.start_mark.line + 1
                items.append(self.build(item, dotted, depth + 1, item_line))
            return items
        return self.loader.construct_object(node, deep=True)

    def scalar(self, node: yaml.ScalarNode, prefix: str) -> Any:
        tag, value = node.tag, node.value
        if tag in (_STR_TAG, _TIME_TAG):
            return value
        if tag == _NULL_TAG:
            return None
        if tag in (_INT_TAG, _FLOAT_TAG):
            if len(value) > MAX_NUMBER_CHARS:
                self.refuse(
                    f"a number {len(value)} characters long is not a figure",
                    node,
                    prefix,
                    "write the figure itself, or quote it if it is text",
                )
            if tag == _INT_TAG:
                if _PLAIN_INT.fullmatch(value):
                    return int(value)
                return self.loader.construct_yaml_int(node)
            number = self.loader.construct_yaml_float(node)
            if not math.isfinite(number):
                self.refuse(
                    f"{value} is not a finite number",
                    node,
                    prefix,
                    "write the figure, or null when it is unknown",
                )
            return number
        if tag == _BOOL_TAG:
            return self.loader.construct_yaml_bool(node)
        return self.loader.construct_object(node, deep=True)

    def mapping(self, node: yaml.MappingNode, prefix: str, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == "<<":
                self.fail(
                    "YAML merge keys (<<) are not allowed in run files",
                    line,
                    prefix,
                    "write the keys out in full",
                )
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                shown = key_node.value if isinstance(key_node, yaml.ScalarNode) else "…"
                self.fail(
                    f"key {shown!r} is not text", line, prefix, "quote it, e.g. 'on': or '1':"
                )
            key = key_node.value
            dotted = f"{prefix}.{key}" if prefix else key
            if key in first_line:
                self.fail(
                    f"duplicate key {key!r} (first at line {first_line[key]})",
                    line,
                    dotted,
                    "keep one of them",
                )
            first_line[key] = line
            self.lines[dotted] = line
            result[key] = self.build(value_node, dotted, depth + 1, line)
        return result


def _syntax_error(exc: yaml.YAMLError, text: str, path: str) -> RunFileError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line = mark.line + 1 if mark is not None else None
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or "invalid YAML"
    if isinstance(exc, yaml.reader.ReaderError):
        line = text.count("\n", 0, exc.position) + 1
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return RunFileError(
            f"control character U+{code:04X} is not allowed",
            path=path,
            line=line,
            hint="remove it; run files are plain UTF-8 text",
        )
    if isinstance(exc, yaml.constructor.ConstructorError) and "tag" in str(problem):
        tag = getattr(exc.problem_mark, "name", None) and re.search(r"'([^']+)'", str(problem))
        shown = tag.group(1).replace("tag:yaml.org,2002:", "!!") if tag else "this tag"
        return RunFileError(
            f"YAML tag {shown} is not allowed",
            path=path,
            line=line,
            hint="run files hold plain text, numbers, true/false, lists and mappings",
        )
    if "another document" in str(problem) or "single document" in str(problem):
        return RunFileError(
            "more than one YAML document ('---')",
            path=path,
            line=line,
            hint="one run per file",
        )
    return RunFileError(
        f"YAML syntax error: {problem}",
        path=path,
        line=line,
        hint="fix the YAML at that line",
    )


def load_yaml_text(text: str, *, path: str) -> Loaded:
    """Parse one YAML document safely; errors name the file and line."""
    tab = _TAB_INDENT.search(text)
    if tab is not None:
        raise RunFileError(
            "tab character in indentation",
            path=path,
            line=text.count("\n", 0, tab.start()) + 1,
            hint="YAML indents with spaces only",
        )
    try:
        deep = _too_deep_line(text) if _might_nest_deeply(text) else None
        if deep is not None:
            raise RunFileError(
                f"nested more than {MAX_DEPTH} levels deep",
                path=path,
                line=deep,
            )
        loader = _CLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return Loaded(None, {})
            builder = _Builder(loader, path)
            data = builder.build(node, "", 0, 1)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _syntax_error(exc, text, path) from None
    return Loaded(data, builder.lines)


def load_yaml_file(path: Path) -> Loaded:
    """Read ``path`` as UTF-8 YAML (see ``load_yaml_text``)."""
    return load_yaml_text(read_text_file(path), path=str(path))
