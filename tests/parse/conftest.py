"""Shared helpers for the parser tests: where fixtures live and how a fixture is parsed."""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import pgbench_kb  # noqa: F401
except ImportError:  # the package is not installed: use the source tree
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
