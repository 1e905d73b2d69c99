"""Reading a profile: the file (a regular file, a YAML mapping), its schema
(``runs/schemas/profile.schema.json``, validated by the code that validates run files), the
rules the schema cannot say (``key_rules``), and the ``Profile`` built from valid data.

``profile_problems`` returns every problem (``kb check``); ``load_profile`` raises the first as
a located ``ProfileError`` (``kb plan``, and bench.sh before anything starts).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from pgbench_kb.bench.profile.key_rules import Rules, data_rules, plan_rules
from pgbench_kb.bench.profile.model import (
    DEFAULT_LOGGED_LATENCIES,
    RATE_CALIBRATION_S,
    RESETS,
    Profile,
    Script,
    Workload,
)
from pgbench_kb.errors import ProfileError, RunFileError
from pgbench_kb.runs.documents import Located, read_document, schema_problems
from pgbench_kb.runs.runfile import Loaded

PROFILES_DIR = Path(__file__).resolve().parents[3] / "profiles"


def resolve_profile_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} or "/" in name_or_path:
        return candidate
    return PROFILES_DIR / f"{name_or_path}.yaml"


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def _file_kind(path: Path) -> str:
    if path.is_dir():
        return "folder"
    if path.is_fifo():
        return "FIFO"
    if path.is_char_device() or path.is_block_device():
        return "device"
    if path.is_socket():
        return "socket"
    return "special file"


def _read_profile_file(name_or_path: str, path: Path) -> Loaded:
    """The profile's YAML with line numbers: a regular file, a mapping."""
    if path.exists() and not path.is_file():
        # A folder, a FIFO, a device (/dev/zero): never opened, so never read without end.
        raise ProfileError(
            f"not a regular file (a {_file_kind(path)})",
            path=str(path),
            hint="give a profile name or the path of a YAML file",
        )
    if not path.is_file():
        raise ProfileError(
            f"no such profile '{name_or_path}'",
            path=str(path),
            hint="shipped profiles: " + ", ".join(shipped_profiles()),
        )
    try:
        loaded = read_document(path, str(path))
    except RunFileError as exc:
        raise ProfileError(
            exc.message, path=exc.path, line=exc.line, field=exc.field, hint=exc.hint
        ) from None
    if not isinstance(loaded.data, dict):
        raise ProfileError(
            "a profile is a YAML mapping of keys to values",
            path=str(path),
            line=1,
            hint="start from scripts/profiles/smoke.yaml",
        )
    return loaded


def _problems(
    loaded: Loaded, path: Path, shown: str, known_settings: set[str] | None
) -> tuple[list[Located], Profile | None]:
    """The problems of a profile's data, first problem first, and the profile when none."""
    found = schema_problems("profile", loaded, shown)
    if found:
        return found, None
    rules = Rules(loaded, path, shown, known_settings)
    found = data_rules(rules)
    if found:
        return found, None
    profile = build_profile(loaded.data, path)
    found = plan_rules(rules, profile)
    return found, None if found else profile


def profile_problems(path: Path, shown: str) -> list[Located]:
    """Every problem of the profile at ``path`` (for ``kb check``), in line order."""
    try:
        loaded = read_document(path, shown)
    except RunFileError as exc:
        return [Located(shown, exc.line, exc.field or "(file)", exc.message, exc.hint)]
    if not isinstance(loaded.data, dict):
        return [Located(shown, 1, "(file)", "a profile is a YAML mapping of keys to values")]
    found, _ = _problems(loaded, path, shown, None)
    return sorted(found, key=lambda p: p.line or 0)


def load_profile(name_or_path: str, *, known_settings: set[str] | None = None) -> Profile:
    """Read and validate a profile; the first problem is raised as a located ``ProfileError``.

    ``known_settings``: the server's setting names, to reject a misspelt setting before any
    trial runs (bench.sh passes them from ``postgres --describe-config``)."""
    path = resolve_profile_path(name_or_path)
    loaded = _read_profile_file(name_or_path, path)
    found, profile = _problems(loaded, path, str(path), known_settings)
    if profile is None:
        # A missing key is often a misspelt one: its "unknown key" is the better first word.
        first = sorted(found, key=lambda p: p.message.startswith("missing"))[0]
        raise ProfileError(
            first.message, path=str(path), line=first.line, field=first.field, hint=first.hint
        )
    return profile


def _listed(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, list) else (value,)


def setting_value(value: Any) -> str:
    """A setting as postgresql.conf writes it: on/off, every digit of a float."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)  # all its digits: f"{v:g}" kept 6
    return str(value)


def _settings(values: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
    return tuple((str(name), setting_value(v)) for name, v in (values or {}).items())


def _settings_sets(data: dict[str, Any]) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The server settings of each set: ``settings`` for all, each set's own on top of them.
    Without sets, one set: "defaults" (nothing set) or "profile" (``settings`` only)."""
    base = _settings(data.get("settings"))
    sets = data.get("settings_sets")
    if sets is None:
        return (("defaults" if not base else "profile", base),)
    out = []
    for name, values in sets.items():
        merged = dict(base)
        merged.update(_settings(values))
        out.append((str(name), tuple(merged.items())))
    return tuple(out)


def _workload(item: Any, base: Path) -> Workload:
    if isinstance(item, str):
        return Workload(item, (Script(builtin=item, file=None, weight=1),))
    scripts = tuple(
        Script(
            builtin=s.get("builtin"),
            file=(base / s["file"]).resolve() if "file" in s else None,
            weight=int(s.get("weight", 1)),
        )
        for s in item["scripts"]
    )
    return Workload(item["name"], scripts)


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _rate(value: Any) -> float | str | None:
    """A rates entry: a number of tps, a share of the maximum kept as written ("70%"), or
    None."""
    return value if isinstance(value, str) else _optional_float(value)


def _flush_level(value: Any) -> str:
    """A flush_ms entry as the plan carries it: 'native', 'native-traced' or the target in ms
    written as short as it goes (2.0 → '2')."""
    if isinstance(value, str):
        return value
    number = float(value)
    return str(int(number)) if number.is_integer() else repr(number)


def build_profile(data: dict[str, Any], path: Path) -> Profile:
    """The ``Profile`` of schema-valid data (whole numbers written 2.0 become 2)."""
    threads = data.get("threads", "auto")
    sampling = data.get("log_sampling_rate", "auto")
    seed = data.get("seed")
    return Profile(
        name=path.stem,
        path=path,
        description=data["description"].strip(),
        scales=tuple(int(v) for v in _listed(data["scales"])),
        clients=tuple(int(v) for v in _listed(data["clients"])),
        threads=None if threads == "auto" else int(threads),
        workloads=tuple(_workload(w, path.parent) for w in _listed(data["workloads"])),
        duration_s=int(data["duration_s"]) if "duration_s" in data else None,
        transactions=int(data["transactions"]) if "transactions" in data else None,
        query_modes=_listed(data.get("query_modes", ["simple"])),
        rates=tuple(_rate(r) for r in _listed(data.get("rates", [None]))),
        latency_limit_ms=_optional_float(data.get("latency_limit_ms")),
        repeats=int(data.get("repeats", 1)),
        warmup_s=int(data.get("warmup_s", 0)),
        reset=RESETS[data.get("reset", "template")],
        log_sampling_rate=None if sampling == "auto" else float(sampling),
        init_flags=tuple(data.get("init_flags") or ()),
        settings_sets=_settings_sets(data),
        seed=None if seed is None else int(seed),
        sessions=int(data.get("sessions", 1)),
        logged_latencies=int(data.get("logged_latencies", DEFAULT_LOGGED_LATENCIES)),
        servers=tuple(dict.fromkeys(s.rstrip("/") or "/" for s in _listed(data["servers"])))
        if data.get("servers") is not None
        else (),
        rate_calibration_s=int(data.get("rate_calibration_s", RATE_CALIBRATION_S)),
        rerun_disturbed=int(data.get("rerun_disturbed", 0)),
        flush_levels=tuple(_flush_level(v) for v in _listed(data["flush_ms"]))
        if data.get("flush_ms") is not None
        else (),
    )
