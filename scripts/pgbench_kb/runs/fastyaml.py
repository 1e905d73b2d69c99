"""A fast reader for the YAML that ``kb import`` writes, with the full loader as the fallback.

Run files are written by one dumper (block style, two-space indents, sequences not indented
under their key, text quoted whenever YAML could read it as anything else). Reading 10,000 of
them with a general YAML loader costs over a millisecond each; this reader handles exactly
that canonical subset line by line and gives up (returns ``None``) on anything else, such as
a double-quoted or literal-block string, a flow collection other than ``[]`` or ``{}``, an
anchor, a tag, a duplicate key or a scalar YAML 1.1 could read as a date, an octal or a
boolean. The caller then loads the file with ``runs.runfile.load_yaml_file``, which also
reports any real error with its line. tests/analyze/test_fastyaml.py checks both readers give
the same data on every run file in the repository and on synthetic ones.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import yaml

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.\-]*):(?: (.*))?$")
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+$")
# First characters with which a plain scalar could be read as something other than text.
_RISKY_FIRST = frozenset("yYnNtTfFoO-+0123456789.<~=!&*|>%@`\"[]{},#?:'")
_NEVER_PLAIN = frozenset('!&*|>%@`"[]{},#?:')
_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_NULL = "tag:yaml.org,2002:null"
_BOOL = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufffe\uffff]")
_SEQ = 1
_LINE = 0


class _GiveUp(Exception):
    pass


@functools.lru_cache(maxsize=1 << 16)
def _raw_line(raw: str) -> tuple[int, bool, str, tuple[tuple[int, int, str], ...]]:
    """(indent, starts a sequence item, key name, tokens) of one line; cached, since the same
    lines recur in every run file. Blank and comment lines have no tokens."""
    stripped = raw.lstrip(" ")
    if not stripped or stripped[0] == "#":
        return 0, False, "", ()
    indent = len(raw) - len(stripped)
    if "\t" in raw[: indent + 1]:
        raise _GiveUp
    tokens = []
    content = stripped.rstrip(" ")
    level = indent
    while content.startswith("- ") or content == "-":
        tokens.append((level, _SEQ, ""))
        content = content[2:].lstrip(" ")
        level += 2
        if not content:
            break
    if content:
        tokens.append((level, _LINE, content))
    seq = stripped.startswith("-")
    return indent, seq, "" if seq else stripped.split(":", 1)[0], tuple(tokens)


def _tokens(text: str, skip: frozenset[str]) -> list[tuple[int, int, str]]:
    """(indent, kind, content) per line; ``- `` opens a sequence item one level deeper. Keys in
    ``skip`` (``top`` or ``top.second``) are left out with everything under them."""
    tokens: list[tuple[int, int, str]] = []
    top = ""
    skipping = -1
    for raw in text.split("\n"):
        indent, seq, name, line_tokens = _raw_line(raw)
        if not line_tokens:
            continue
        if skipping >= 0:
            if indent > skipping or (indent == skipping and seq):
                continue
            skipping = -1
        if skip and indent <= 2 and not seq:
            if indent == 0:
                top = name
            dotted = name if indent == 0 else f"{top}.{name}"
            if dotted in skip:
                skipping = indent
                continue
        tokens.extend(line_tokens)
    return tokens


def scalar(text: str) -> Any:
    """A plain or single-quoted scalar of the canonical form, or _GiveUp."""
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'"):
            raise _GiveUp
        inner = text[1:-1]
        if "'" in inner.replace("''", ""):
            raise _GiveUp
        return inner.replace("''", "'")
    if " #" in text or ": " in text or text.endswith(":"):
        raise _GiveUp
    if text[0] not in _RISKY_FIRST:
        return text
    if text == "[]":
        return []
    if text == "{}":
        return {}
    if text[0] in _NEVER_PLAIN:
        raise _GiveUp
    # The full loader's own resolver decides what the text is; only its simplest answers are
    # taken here.
    tag = _tag(text)
    if tag in (_STR, _TIMESTAMP):
        return text
    if tag == _NULL:
        return None
    if tag == _BOOL:
        return yaml.constructor.SafeConstructor.bool_values[text.lower()]
    if tag == _INT_TAG and _INT.match(text):
        return int(text)
    if tag == _FLOAT_TAG and _FLOAT.match(text):
        return float(text)
    raise _GiveUp


@functools.lru_cache(maxsize=65536)
def _tag(text: str) -> str:
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))


@functools.lru_cache(maxsize=4096)
def _text_key(key: str) -> bool:
    """Whether a plain key reads as text (``on:`` or ``1:`` would not)."""
    return key[0] not in _RISKY_FIRST or _tag(key) == _STR


_EMPTY_LIST = object()
_EMPTY_MAP = object()
_NOT_KEY = object()


def _fresh(value: Any) -> Any:
    if value is _EMPTY_LIST:
        return []
    if value is _EMPTY_MAP:
        return {}
    return value


@functools.lru_cache(maxsize=1 << 16)
def _line(content: str) -> tuple[Any, Any]:
    """(key, value) of a ``key: value`` line (value _NOT_KEY for ``key:`` alone), or
    (_NOT_KEY, scalar) for a scalar line; (None, None) when outside the subset. Cached: the
    same lines recur in every run file."""
    try:
        match = _KEY.match(content)
        if match is None:
            return _NOT_KEY, _frozen(scalar(content))
        key, rest = match.group(1), match.group(2)
        if not _text_key(key):
            return None, None
        return key, (_frozen(scalar(rest)) if rest else _NOT_KEY)
    except _GiveUp:
        return None, None


def _frozen(value: Any) -> Any:
    if value == [] and isinstance(value, list):
        return _EMPTY_LIST
    if value == {} and isinstance(value, dict):
        return _EMPTY_MAP
    return value


class _Reader:
    def __init__(self, tokens: list[tuple[int, int, str]]) -> None:
        self.tokens = tokens
        self.i = 0

    def node(self, indent: int) -> Any:
        tok_indent, kind, content = self.tokens[self.i]
        if tok_indent != indent:
            raise _GiveUp
        if kind == _SEQ:
            return self.sequence(indent)
        key, value = _line(content)
        if key is None:
            raise _GiveUp
        if key is not _NOT_KEY:
            return self.mapping(indent)
        self.i += 1
        return self.folded(_fresh(value), indent - 1, content)

    def folded(self, value: Any, owner_indent: int, first: str) -> Any:
        """Continuation lines of a plain scalar (indented deeper than its key) fold into it."""
        parts = None
        while self.i < len(self.tokens):
            tok_indent, kind, content = self.tokens[self.i]
            if tok_indent <= owner_indent or kind == _SEQ:
                break
            if not isinstance(value, str) or first.startswith("'"):
                raise _GiveUp
            if _KEY.match(content) or " #" in content or ": " in content:
                raise _GiveUp
            parts = parts or [value]
            parts.append(content)
            self.i += 1
        return " ".join(parts) if parts else value

    def mapping(self, indent: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        while self.i < len(self.tokens):
            tok_indent, kind, content = self.tokens[self.i]
            if tok_indent < indent:
                break
            if tok_indent > indent or kind == _SEQ:
                raise _GiveUp
            key, value = _line(content)
            if key is None or key is _NOT_KEY or key in result:
                raise _GiveUp
            self.i += 1
            if value is not _NOT_KEY:
                value = _fresh(value)
                if self.i < len(self.tokens) and self.tokens[self.i][0] > indent:
                    value = self.folded(value, indent, content.partition(": ")[2])
                result[key] = value
                continue
            if self.i < len(self.tokens):
                next_indent, next_kind, _ = self.tokens[self.i]
                if next_indent > indent:
                    result[key] = self.node(next_indent)
                    continue
                if next_indent == indent and next_kind == _SEQ:
                    result[key] = self.sequence(indent)
                    continue
            result[key] = None
        return result

    def sequence(self, indent: int) -> list[Any]:
        items: list[Any] = []
        while self.i < len(self.tokens):
            tok_indent, kind, _ = self.tokens[self.i]
            if tok_indent != indent or kind != _SEQ:
                if tok_indent > indent:
                    raise _GiveUp
                break
            self.i += 1
            if self.i >= len(self.tokens) or self.tokens[self.i][0] <= indent:
                items.append(None)
                continue
            items.append(self.node(indent + 2))
        return items


def fast_load(text: str, skip: frozenset[str] = frozenset()) -> Any | None:
    """The data of a canonical run file, or None when the text is outside the subset. Keys
    named in ``skip`` (a top-level key, or ``top.second``) are left out unread."""
    if _CONTROL.search(text):
        return None
    try:
        tokens = _tokens(text.removeprefix("\ufeff"), skip)
        if not tokens:
            return None
        reader = _Reader(tokens)
        data = reader.node(tokens[0][0])
        if reader.i != len(tokens):
            return None
        return data
    except (_GiveUp, IndexError, RecursionError):
        return None
