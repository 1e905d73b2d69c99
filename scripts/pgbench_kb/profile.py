"""Bench profiles: load and validate a profile YAML and expand it into trials.

``scripts/bench.sh`` asks ``kb plan PROFILE`` for the trials and runs them; it never reads YAML
itself. A plan line is tab-separated; list-valued fields are joined with the ASCII unit
separator (0x1f) so that bash can split them into arrays without any quoting rules::

    index total group repeat repeats scale settings_name settings workload pgbench_args seconds
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ProfileError
from pgbench_kb.runfile import load_yaml_file

PROFILES_DIR = Path(__file__).resolve().parents[1] / "profiles"
BUILTINS = ("tpcb-like", "simple-update", "select-only")
UNIT_SEP = "\x1f"
KNOWN_KEYS = {"description", "scales", "clients", "workloads", "duration_s", "repeats"}


@dataclass(frozen=True)
class Profile:
    name: str
    path: Path
    scales: tuple[int, ...]
    clients: tuple[int, ...]
    workloads: tuple[str, ...]
    duration_s: int
    repeats: int


@dataclass(frozen=True)
class Trial:
    index: int
    total: int
    group: str
    repeat: int
    repeats: int
    scale: int
    settings_name: str
    settings: tuple[str, ...]
    workload: str
    pgbench_args: tuple[str, ...]
    seconds: int


def resolve_profile_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} or "/" in name_or_path:
        return candidate
    return PROFILES_DIR / f"{name_or_path}.yaml"


def _positive_ints(value: Any, key: str, path: str, line: int | None) -> tuple[int, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(
        isinstance(i, int) and not isinstance(i, bool) and i > 0 for i in items
    ):
        raise ProfileError(
            f"expected a positive whole number or a list of them, got {value!r}",
            path=path,
            line=line,
            field=key,
            hint=f"e.g. {key}: [1, 4]",
        )
    return tuple(items)


def load_profile(name_or_path: str) -> Profile:
    """Read and validate a profile; every problem names the file, line and key."""
    path = resolve_profile_path(name_or_path)
    if not path.is_file():
        shipped = ", ".join(sorted(p.stem for p in PROFILES_DIR.glob("*.yaml")))
        raise ProfileError(
            f"no such profile '{name_or_path}'",
            path=str(path),
            hint=f"shipped profiles: {shipped}",
        )
    loaded = load_yaml_file(path)
    data = loaded.data
    where = str(path)
    if not isinstance(data, dict):
        raise ProfileError("a profile is a YAML mapping of keys to values", path=where, line=1)
    for key in data:
        if key not in KNOWN_KEYS:
            raise ProfileError(
                f"unknown key '{key}'",
                path=where,
                line=loaded.line_of(str(key)),
                field=str(key),
                hint="known keys: " + ", ".join(sorted(KNOWN_KEYS)),
            )
    for key in ("scales", "clients", "workloads", "duration_s"):
        if key not in data:
            raise ProfileError(
                "missing", path=where, line=1, field=key, hint=f"add '{key}:' to the profile"
            )
    workloads = data["workloads"] if isinstance(data["workloads"], list) else [data["workloads"]]
    for workload in workloads:
        if workload not in BUILTINS:
            raise ProfileError(
                f"unknown workload {workload!r}",
                path=where,
                line=loaded.line_of("workloads"),
                field="workloads",
                hint="builtin workloads: " + ", ".join(BUILTINS),
            )
    return Profile(
        name=path.stem,
        path=path,
        scales=_positive_ints(data["scales"], "scales", where, loaded.line_of("scales")),
        clients=_positive_ints(data["clients"], "clients", where, loaded.line_of("clients")),
        workloads=tuple(workloads),
        duration_s=_positive_ints(
            data["duration_s"], "duration_s", where, loaded.line_of("duration_s")
        )[0],
        repeats=_positive_ints(data.get("repeats", 1), "repeats", where, loaded.line_of("repeats"))[
            0
        ],
    )


def threads_for(clients: int, cores: int) -> int:
    """pgbench threads: one per client up to the client machine's cores, dividing clients."""
    threads = max(1, min(clients, cores))
    while clients % threads:
        threads -= 1
    return threads


def _group_id(config: dict[str, Any]) -> str:
    blob = json.dumps(config, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:8]


def expand(profile: Profile, *, cores: int | None = None) -> list[Trial]:
    """Every trial of the profile, repeats innermost so that a configuration's runs sit together."""
    cores = cores or os.cpu_count() or 1
    configs = []
    for scale in profile.scales:
        for workload in profile.workloads:
            for clients in profile.clients:
                threads = threads_for(clients, cores)
                args = (
                    "--builtin",
                    workload,
                    "--client",
                    str(clients),
                    "--jobs",
                    str(threads),
                    "--time",
                    str(profile.duration_s),
                    "--progress",
                    "1",
                    "--report-per-command",
                )
                configs.append((scale, workload, args))
    total = len(configs) * profile.repeats
    trials = []
    for scale, workload, args in configs:
        group = _group_id({"scale": scale, "args": args, "settings": {}})
        for repeat in range(1, profile.repeats + 1):
            trials.append(
                Trial(
                    index=len(trials) + 1,
                    total=total,
                    group=group,
                    repeat=repeat,
                    repeats=profile.repeats,
                    scale=scale,
                    settings_name="defaults",
                    settings=(),
                    workload=workload,
                    pgbench_args=args,
                    seconds=profile.duration_s,
                )
            )
    return trials


def render_plan(profile: Profile, *, cores: int | None = None) -> str:
    """The plan as text for bash: one tab-separated line per trial."""
    lines = []
    for t in expand(profile, cores=cores):
        fields = [
            str(t.index),
            str(t.total),
            t.group,
            str(t.repeat),
            str(t.repeats),
            str(t.scale),
            t.settings_name,
            UNIT_SEP.join(t.settings),
            t.workload,
            UNIT_SEP.join(t.pgbench_args),
            str(t.seconds),
        ]
        lines.append("\t".join(fields))
    return "".join(line + "\n" for line in lines)
