"""JSON text as pgbench-kb writes it: ``kb derive``'s pages, data files and downloads, and
``kb compare --json``.

Encoders made once (``json.dumps`` with options builds one per call, some 85,000 times on
10,000 runs), none of which looks for cycles: what they write is a tree read from files or
built by the analysis, never a cycle (a cycle would end in ``RecursionError``), and the search
costs some 15% of the encoding. Each writes the bytes ``json.dumps`` writes with the same
options.

- ``strict``: what a page shows — text as it is (``ensure_ascii=False``) and no NaN or
  infinity (one is a bug upstream, not something to print);
- ``lenient``: the downloads — text as it is, what JSON has no type for as its ``str``
  (``default=str``), and the NaN or infinity a published figure may hold;
- ``plain``: ``json.dumps``'s defaults (``kb compare --json``);
- ``compact``: ``strict`` without the spaces after commas and colons, for data a page loads
  (compare any N's files).

Like ``errors.py`` and ``parallel.py``, this module belongs to no stage.
"""

from __future__ import annotations

import json
from typing import Any

_STRICT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False)
_LENIENT = json.JSONEncoder(ensure_ascii=False, check_circular=False, default=str)
_PLAIN = json.JSONEncoder(check_circular=False)
_COMPACT = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":")
)


def strict(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False)``."""
    return _STRICT.encode(value)


def lenient(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, default=str)``."""
    return _LENIENT.encode(value)


def plain(value: Any) -> str:
    """``json.dumps(value)``."""
    return _PLAIN.encode(value)


def compact(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))``."""
    return _COMPACT.encode(value)
