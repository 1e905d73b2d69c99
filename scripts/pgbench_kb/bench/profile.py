"""Bench profiles: read and validate a profile YAML, expand it into the trials of a bench.

``scripts/bench.sh`` never reads YAML. It asks ``kb plan --for-bash PROFILE`` for the trials and
runs them in order; ``kb plan PROFILE`` prints the same plan for people. Every problem in a
profile is a ``ProfileError`` located as ``path:line: field: message (hint)``.

Profile keys (docs/harness.md has the long form)::

    description        one line saying what the profile is for                  (required)
    scales             pgbench -i -s, a number or a list                         (required)
    clients            pgbench -c, a number or a list                            (required)
    threads            pgbench -j: "auto" (default: as many as the client's cores allow,
                       dividing the clients evenly) or a number
    workloads          a list; each item is a builtin name (tpcb-like, simple-update,
                       select-only) or {name: N, scripts: [{builtin: B | file: F, weight: W}]};
                       a file is relative to the profile's folder                (required)
    duration_s         pgbench -T; or
    transactions       pgbench -t (per client) — exactly one of the two
    query_modes        pgbench -M: simple | extended | prepared (default [simple])
    rates              pgbench -R in transactions per second; null = unthrottled (default [null])
    latency_limit_ms   pgbench -L (needs a rate)
    repeats            runs of each configuration (default 1)
    warmup_s           an unrecorded run of the same workload before each trial (default 0)
    reset              how the database is put back before each trial: template (a clone of
                       a template database made once per scale) | reinit (pgbench -i again)
    log_sampling_rate  share of transactions written to the per-transaction log (0 turns the
                       log off); left out (or ``auto``), the harness picks it per trial so that
                       the log holds ``logged_latencies`` latencies (bench/sampling.py)
    logged_latencies   latencies a picked rate aims at: 1000 (p99, default) or 10000 (p99.9)
    init_flags         extra pgbench -i flags, e.g. [--partitions=4, --init-steps=dtgvp]
    settings           server settings for every trial (name: value)
    settings_sets      name → settings; the throwaway server restarts when the set changes
    seed               seed of the random order (default: drawn by each plan, and recorded)
    sessions           replicate sessions of the whole design (default 1), each with its own
                       session token in repeat.group and its own fresh server
    servers            server builds interleaved in one bench: "embedded" and/or folders of
                       PostgreSQL binaries; a throwaway cluster each (default: the environment's)

Order of trials: session by session; in each session, round (repeat) by round; in each round
every configuration (server × scale × settings set × workload × query mode × rate × clients)
once, in an order shuffled by ``random.Random(seed)``. Every axis is interleaved, server builds,
scale and settings sets included: a template database per scale (and build) is made when a
session starts, and the server restarts only when the settings set or the build changes (about
0.3 s each, measured: docs/harness.md). A slow drift of the machine then spreads over every
configuration instead of biasing some, and the order can be made again from the seed the run
files record (``repeat.design.seed``).

TPC-B-like with more clients than branches (scale) is refused: the clients would queue on the
branch rows.

Plan format for bash (``--for-bash``): one line per trial, fields separated by 0x1e, lists
inside a field by 0x1f (neither is whitespace, so empty fields survive ``read``)::

    index total group repeat repeats scale settings_name settings workload pgbench_args
    seconds warmup_args init_args reset script_files session sessions position seed
    logged_latencies server

``logged_latencies`` is 0 when the profile fixes the sampling rate; otherwise pgbench_args
hold ``--sampling-rate=auto``, which bash replaces by the rate ``bench.sampling`` picks.
``pgbench_args`` exclude the connection and the database name, which bash adds. ``group`` is a
hash of the configuration; ``kb import`` makes ``repeat.group`` of it, the machine and the
session's start and its token (``<machine>-<YYYYMMDDTHHMMSSZ>-<token>-<hash>``).
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import math
import os
import random
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pgbench_kb.errors import ProfileError, RunFileError, UsageError
from pgbench_kb.runs.runfile import Loaded, load_yaml_file

PROFILES_DIR = Path(__file__).resolve().parents[2] / "profiles"
BUILTINS = ("tpcb-like", "simple-update", "select-only")
QUERY_MODES = ("simple", "extended", "prepared")
RESETS = {"template": "template-clone", "reinit": "reinit"}
FIELD_SEP = "\x1e"
UNIT_SEP = "\x1f"
DEFAULT_SAMPLING_RATE = 0.05
# Latencies a run's per-transaction log should hold when the harness picks the sampling rate:
# the guides' rule for p99 (1,000); a profile that wants p99.9 asks for 10,000.
DEFAULT_LOGGED_LATENCIES = 1000
# Seeds are drawn below this (and a profile's seed must be below it): any Python int would do,
# but a short number is easier to copy into a profile.
SEED_LIMIT = 2**31
# Several sessions re-run the whole design, each on a fresh server: more than this is a mistake.
MAX_SESSIONS = 20
# pgbench reads -c, -j, -T, -t, -s and script weights as C ints: 1 .. 2147483647.
PGBENCH_INT_MAX = 2**31 - 1
# A profile that expands to more trials than this is a mistake (a repeats or a list far too
# long), not a bench: it would take days, and its plan alone gigabytes.
MAX_TRIALS = 10_000
KNOWN_KEYS = (
    "description",
    "scales",
    "clients",
    "threads",
    "workloads",
    "duration_s",
    "transactions",
    "query_modes",
    "rates",
    "latency_limit_ms",
    "repeats",
    "warmup_s",
    "reset",
    "log_sampling_rate",
    "init_flags",
    "settings",
    "settings_sets",
    "seed",
    "sessions",
    "logged_latencies",
    "servers",
    "wal_dir",  # read by bench.placement (where the throwaway server keeps its WAL)
)
SETTING_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z0-9_]+)?$")
WORKLOAD_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
# Settings the harness sets itself to keep the throwaway server private.
HARNESS_SETTINGS = ("listen_addresses", "unix_socket_directories", "port", "data_directory")
# Settings the harness sets on its server's log, to record when checkpoints ran.
HARNESS_LOG_SETTINGS = ("log_checkpoints", "log_timezone", "log_line_prefix")


@dataclass(frozen=True)
class Script:
    builtin: str | None
    file: Path | None
    weight: int

    def arg(self) -> str:
        what = self.builtin if self.builtin else str(self.file)
        flag = "--builtin" if self.builtin else "--file"
        return f"{flag}={what}@{self.weight}"


@dataclass(frozen=True)
class Workload:
    name: str
    scripts: tuple[Script, ...]


@dataclass(frozen=True)
class Profile:
    name: str
    path: Path
    description: str
    scales: tuple[int, ...]
    clients: tuple[int, ...]
    threads: int | None
    workloads: tuple[Workload, ...]
    duration_s: int | None
    transactions: int | None
    query_modes: tuple[str, ...]
    rates: tuple[float | None, ...]
    latency_limit_ms: float | None
    repeats: int
    warmup_s: int
    reset: str
    log_sampling_rate: float | None
    init_flags: tuple[str, ...]
    settings_sets: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    seed: int | None = None
    sessions: int = 1
    logged_latencies: int = DEFAULT_LOGGED_LATENCIES
    #: Server builds interleaved in one bench: "embedded" or a folder of binaries; empty: the
    #: one the environment chooses (the embedded wheel, PG_BINDIR, or an existing server).
    servers: tuple[str, ...] = ()


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
    warmup_args: tuple[str, ...] = ()
    init_args: tuple[str, ...] = ()
    reset: str = "template-clone"
    script_files: tuple[str, ...] = field(default=())
    session: int = 1
    sessions: int = 1
    position: int = 1
    seed: int = 0
    #: Latencies the log should hold when the harness picks --sampling-rate (0: the profile
    #: fixed the rate, or turned the log off).
    logged_latencies: int = 0
    #: The server build ("embedded" or a bin folder); "" for the environment's.
    server: str = ""


# ---------------------------------------------------------------------------------------------
# reading


class _Reader:
    """Validation helpers that know the file and the line of every key."""

    def __init__(self, loaded: Loaded, path: Path) -> None:
        self.loaded = loaded
        self.path = path

    def fail(self, key: str, message: str, hint: str | None = None) -> ProfileError:
        return ProfileError(
            message, path=str(self.path), line=self.loaded.line_of(key), field=key, hint=hint
        )

    def as_list(self, key: str, value: Any) -> list[Any]:
        items = value if isinstance(value, list) else [value]
        if not items:
            raise self.fail(key, "is an empty list", f"give at least one value, e.g. {key}: [1]")
        return items

    def positive_int(self, key: str, value: Any, hint: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise self.fail(key, f"expected a positive whole number, got {_shown(value)}", hint)
        if value > PGBENCH_INT_MAX:
            raise self.fail(
                key,
                f"{_shown(value)} is more than pgbench accepts ({PGBENCH_INT_MAX})",
                hint,
            )
        return value

    def positive_ints(self, key: str, value: Any) -> tuple[int, ...]:
        items = self.as_list(key, value)
        return tuple(
            self.positive_int(
                f"{key}.{i}" if isinstance(value, list) else key, item, f"e.g. {key}: [1, 4]"
            )
            for i, item in enumerate(items)
        )

    def number(self, key: str, value: Any, *, minimum: float, hint: str) -> float:
        """A finite number ≥ ``minimum``: pgbench reads ``nan`` and ``inf`` without complaint
        and then fails (or turns the feature off) only after the bench has set up."""
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value < minimum
        ):
            raise self.fail(key, f"expected a number ≥ {minimum:g}, got {_shown(value)}", hint)
        return float(value)


def _shown(value: Any) -> str:
    """``repr(value)``, cut short: a number of thousands of digits is named by its length."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**30:
        return "a number of more than 30 digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def resolve_profile_path(name_or_path: str) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in {".yaml", ".yml"} or "/" in name_or_path:
        return candidate
    return PROFILES_DIR / f"{name_or_path}.yaml"


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


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))


def _setting_value(reader: _Reader, key: str, value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)  # all its digits: f"{v:g}" kept 6
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip() and not any(c in value for c in "\n\r\t\x1e\x1f"):
        return value
    raise reader.fail(
        key, f"expected a setting value (text, number, on/off), got {value!r}", "e.g. 128MB"
    )


def _settings(
    reader: _Reader, key: str, value: Any, known: set[str] | None
) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise reader.fail(key, "expected a mapping of server settings", "e.g. shared_buffers: 1GB")
    out = []
    for name, setting in value.items():
        where = f"{key}.{name}"
        name = str(name)
        if not SETTING_NAME_RE.match(name):
            raise reader.fail(where, f"'{name}' is not a server setting name", "e.g. fsync")
        if name in HARNESS_SETTINGS:
            raise reader.fail(
                where,
                f"'{name}' is set by the harness (the server listens only on a private socket)",
                "remove it from the profile",
            )
        if name in HARNESS_LOG_SETTINGS:
            raise reader.fail(
                where,
                f"'{name}' is set by the harness (its server logs every checkpoint, in UTC, "
                "so that a run can say when they ran)",
                "remove it from the profile",
            )
        if known is not None and name not in known and "." not in name:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            raise reader.fail(
                where,
                f"unknown server setting '{name}'",
                f"did you mean '{close[0]}'?"
                if close
                else "`postgres --describe-config` lists the names this server knows",
            )
        out.append((name, _setting_value(reader, where, setting)))
    return tuple(out)


def _script(reader: _Reader, key: str, item: Any, base: Path) -> Script:
    if not isinstance(item, dict):
        raise reader.fail(key, f"expected {{builtin: NAME}} or {{file: PATH}}, got {item!r}")
    unknown = set(item) - {"builtin", "file", "weight"}
    if unknown:
        raise reader.fail(
            f"{key}.{sorted(unknown)[0]}",
            f"unknown key '{sorted(unknown)[0]}'",
            "a script has builtin or file, and weight",
        )
    weight = reader.positive_int(f"{key}.weight", item.get("weight", 1), "e.g. weight: 9")
    if ("builtin" in item) == ("file" in item):
        raise reader.fail(key, "give exactly one of builtin or file")
    if "builtin" in item:
        if item["builtin"] not in BUILTINS:
            raise reader.fail(
                f"{key}.builtin",
                f"unknown builtin script {item['builtin']!r}",
                "builtin scripts: " + ", ".join(BUILTINS),
            )
        return Script(builtin=item["builtin"], file=None, weight=weight)
    raw = item["file"]
    if not isinstance(raw, str) or not raw.strip() or "@" in raw or "\n" in raw:
        raise reader.fail(f"{key}.file", f"expected a file path, got {raw!r}", "e.g. zipf.sql")
    path = (base / raw).resolve()
    if not path.is_file():
        raise reader.fail(
            f"{key}.file",
            f"no such script file '{raw}' (looked in {path.parent})",
            "paths are relative to the profile's folder",
        )
    return Script(builtin=None, file=path, weight=weight)


def _workloads(reader: _Reader, value: Any, base: Path) -> tuple[Workload, ...]:
    items = reader.as_list("workloads", value)
    out = []
    for i, item in enumerate(items):
        key = f"workloads.{i}" if isinstance(value, list) else "workloads"
        if isinstance(item, str):
            if item not in BUILTINS:
                raise reader.fail(
                    key,
                    f"unknown workload {item!r}",
                    "a builtin (" + ", ".join(BUILTINS) + ") or {name: …, scripts: […]}",
                )
            out.append(Workload(item, (Script(builtin=item, file=None, weight=1),)))
            continue
        if not isinstance(item, dict):
            raise reader.fail(key, f"expected a builtin name or a mapping, got {item!r}")
        unknown = set(item) - {"name", "scripts"}
        if unknown:
            name = sorted(unknown)[0]
            raise reader.fail(
                f"{key}.{name}", f"unknown key '{name}'", "a workload has name and scripts"
            )
        name = item.get("name")
        if not isinstance(name, str) or not WORKLOAD_NAME_RE.match(name):
            raise reader.fail(
                f"{key}.name" if "name" in item else key,
                f"expected a short lower-case name, got {name!r}",
                "e.g. name: read-mostly",
            )
        scripts = item.get("scripts")
        if not isinstance(scripts, list) or not scripts:
            raise reader.fail(
                f"{key}.scripts" if "scripts" in item else key,
                "expected a list of scripts",
                "e.g. scripts: [{builtin: select-only, weight: 9}, {file: my.sql, weight: 1}]",
            )
        out.append(
            Workload(
                name,
                tuple(
                    _script(reader, f"{key}.scripts.{j}", s, base) for j, s in enumerate(scripts)
                ),
            )
        )
    names = [w.name for w in out]
    for i, name in enumerate(names):
        if names.index(name) != i:
            raise reader.fail(f"workloads.{i}", f"workload '{name}' is listed twice")
    return tuple(out)


def load_profile(name_or_path: str, *, known_settings: set[str] | None = None) -> Profile:
    """Read and validate a profile; the first problem is raised as a located ``ProfileError``.

    ``known_settings``: the server's setting names, to reject a misspelt setting before any
    trial runs (bench.sh passes them from ``postgres --describe-config``). Each part of a
    profile is checked by a function of its own, in this order: the file, the keys, the
    description, the length of a trial, threads, query modes, rates, repetition (repeats,
    warm-up, reset, log sampling), pgbench -i flags, settings; then the size of the plan, the
    branches for TPC-B-like and whether a commit_delay can ever apply.
    """
    path = resolve_profile_path(name_or_path)
    reader = _Reader(_read_profile_file(name_or_path, path), path)
    data = reader.loaded.data
    _check_keys(reader, data)
    description = _description(reader, data)
    duration, transactions = _length(reader, data)
    threads = _threads(reader, data)
    query_modes = _query_modes(reader, data)
    rates, latency_limit = _rates(reader, data)
    repeats, warmup, reset, sampling = _repetition(reader, data)
    init_flags = _init_flags(reader, data)
    settings_sets = _settings_sets(reader, data, known_settings)
    seed, sessions, logged = _design(reader, data)
    servers = _servers(reader, data)
    profile = Profile(
        name=path.stem,
        path=path,
        description=description,
        scales=reader.positive_ints("scales", data["scales"]),
        clients=reader.positive_ints("clients", data["clients"]),
        threads=threads,
        workloads=_workloads(reader, data["workloads"], path.parent),
        duration_s=duration,
        transactions=transactions,
        query_modes=query_modes,
        rates=rates,
        latency_limit_ms=latency_limit,
        repeats=repeats,
        warmup_s=warmup,
        reset=reset,
        log_sampling_rate=sampling,
        init_flags=init_flags,
        settings_sets=settings_sets,
        seed=seed,
        sessions=sessions,
        logged_latencies=logged,
        servers=servers,
    )
    _check_trial_limit(reader, data, profile)
    _check_branches(reader, data, profile)
    _check_commit_delay(reader, data, profile)
    return profile


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
        loaded = load_yaml_file(path)
    except RunFileError as exc:
        raise ProfileError(
            exc.message, path=exc.path, line=exc.line, field=exc.field, hint=exc.hint
        ) from None
    except ValueError:
        # Python refuses to convert an integer of more than 4300 digits (int_max_str_digits).
        raise _long_number_error(path) from None
    if not isinstance(loaded.data, dict):
        raise ProfileError(
            "a profile is a YAML mapping of keys to values",
            path=str(path),
            line=1,
            hint="start from scripts/profiles/smoke.yaml",
        )
    return loaded


def _check_keys(reader: _Reader, data: dict[str, Any]) -> None:
    """No unknown key; every required one."""
    for key in data:
        if key not in KNOWN_KEYS:
            raise reader.fail(
                str(key), f"unknown key '{key}'", "known keys: " + ", ".join(KNOWN_KEYS)
            )
    for key in ("description", "scales", "clients", "workloads"):
        if key not in data:
            raise ProfileError(
                "missing",
                path=str(reader.path),
                line=1,
                field=key,
                hint=f"add '{key}:' to the profile",
            )


def _description(reader: _Reader, data: dict[str, Any]) -> str:
    description = data["description"]
    if not isinstance(description, str) or not description.strip():
        raise reader.fail("description", "expected one line of text")
    return description.strip()


def _length(reader: _Reader, data: dict[str, Any]) -> tuple[int | None, int | None]:
    """(duration_s, transactions): exactly one of pgbench -T and -t."""
    has_t, has_n = "duration_s" in data, "transactions" in data
    if has_t and has_n:
        raise reader.fail(
            "transactions",
            "give only one of duration_s (pgbench -T) and transactions (pgbench -t)",
            "remove one of them",
        )
    if not has_t and not has_n:
        raise ProfileError(
            "missing",
            path=str(reader.path),
            line=1,
            field="duration_s",
            hint="add 'duration_s:' (pgbench -T) or 'transactions:' (pgbench -t)",
        )
    if has_t:
        return reader.positive_int("duration_s", data["duration_s"], "e.g. duration_s: 10"), None
    return None, reader.positive_int(
        "transactions", data["transactions"], "e.g. transactions: 1000"
    )


def _threads(reader: _Reader, data: dict[str, Any]) -> int | None:
    """pgbench -j: None for "auto"."""
    threads_raw = data.get("threads", "auto")
    if threads_raw == "auto":
        return None
    return reader.positive_int("threads", threads_raw, "'auto' or a number, e.g. threads: 2")


def _query_modes(reader: _Reader, data: dict[str, Any]) -> tuple[str, ...]:
    modes = tuple(reader.as_list("query_modes", data.get("query_modes", ["simple"])))
    for i, mode in enumerate(modes):
        if mode not in QUERY_MODES:
            raise reader.fail(
                f"query_modes.{i}" if isinstance(data.get("query_modes"), list) else "query_modes",
                f"unknown query mode {mode!r}",
                "query modes: " + ", ".join(QUERY_MODES),
            )
    return modes


def _rates(reader: _Reader, data: dict[str, Any]) -> tuple[tuple[float | None, ...], float | None]:
    """(rates, latency_limit_ms): pgbench -R (None unthrottled) and -L, which needs a rate."""
    rates_raw = data.get("rates", [None])
    rates: list[float | None] = []
    for i, rate in enumerate(reader.as_list("rates", rates_raw)):
        key = f"rates.{i}" if isinstance(rates_raw, list) else "rates"
        rates.append(
            None
            if rate is None
            else reader.number(key, rate, minimum=0.001, hint="e.g. rates: [null, 500]")
        )
    latency_limit = data.get("latency_limit_ms")
    if latency_limit is not None:
        latency_limit = reader.number(
            "latency_limit_ms", latency_limit, minimum=0.001, hint="e.g. latency_limit_ms: 50"
        )
        if any(r is None for r in rates):
            raise reader.fail(
                "latency_limit_ms",
                "pgbench applies a latency limit only to rate-limited runs",
                "give every entry of rates a number, or remove latency_limit_ms",
            )
    return tuple(rates), latency_limit


def _repetition(reader: _Reader, data: dict[str, Any]) -> tuple[int, int, str, float | None]:
    """(repeats, warmup_s, reset, log_sampling_rate): how each trial is repeated and prepared.
    The sampling rate is None when the profile leaves it to the harness (absent, or ``auto``)."""
    repeats = reader.positive_int("repeats", data.get("repeats", 1), "e.g. repeats: 3")
    warmup = data.get("warmup_s", 0)
    if warmup != 0:
        warmup = reader.positive_int("warmup_s", warmup, "e.g. warmup_s: 10 (0 for none)")
    reset = data.get("reset", "template")
    if reset not in RESETS:
        raise reader.fail(
            "reset", f"unknown reset {reset!r}", "template (clone, fast) or reinit (pgbench -i)"
        )
    if data.get("log_sampling_rate", "auto") == "auto":
        return repeats, warmup, RESETS[reset], None
    sampling = reader.number(
        "log_sampling_rate",
        data["log_sampling_rate"],
        minimum=0,
        hint="a share between 0 and 1, e.g. 0.05, or leave it out to let the harness choose",
    )
    if sampling > 1:
        raise reader.fail(
            "log_sampling_rate", f"expected a share between 0 and 1, got {sampling:g}"
        )
    return repeats, warmup, RESETS[reset], sampling


def _design(reader: _Reader, data: dict[str, Any]) -> tuple[int | None, int, int]:
    """(seed, sessions, logged_latencies): the randomised order's seed (None: drawn when the
    plan is made), the replicate sessions, the latencies a picked sampling rate aims at."""
    seed = data.get("seed")
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < SEED_LIMIT
    ):
        raise reader.fail(
            "seed",
            f"expected a whole number from 0 to {SEED_LIMIT - 1}, got {_shown(seed)}",
            "copy the seed a run file records (repeat.design.seed), or leave it out",
        )
    sessions = reader.positive_int("sessions", data.get("sessions", 1), "e.g. sessions: 2")
    if sessions > MAX_SESSIONS:
        raise reader.fail(
            "sessions", f"{sessions} sessions; the limit is {MAX_SESSIONS}", "e.g. sessions: 2"
        )
    logged = reader.positive_int(
        "logged_latencies",
        data.get("logged_latencies", DEFAULT_LOGGED_LATENCIES),
        "1000 for p99 (the default), 10000 for p99.9",
    )
    if logged != DEFAULT_LOGGED_LATENCIES and data.get("log_sampling_rate", "auto") != "auto":
        raise reader.fail(
            "logged_latencies",
            "the profile fixes log_sampling_rate, so the harness does not pick one",
            "remove log_sampling_rate to let the harness aim at this many latencies",
        )
    return seed, sessions, logged


def _servers(reader: _Reader, data: dict[str, Any]) -> tuple[str, ...]:
    """Server builds to interleave: ``embedded`` or an absolute folder of PostgreSQL binaries,
    each at most once. Whether a folder holds a server is checked by bench.sh."""
    raw = data.get("servers")
    if raw is None:
        return ()
    items = reader.as_list("servers", raw)
    out: list[str] = []
    for i, item in enumerate(items):
        key = f"servers.{i}" if isinstance(raw, list) else "servers"
        if not isinstance(item, str) or not (
            item == "embedded"
            or (item.startswith("/") and not any(c in item for c in "\n\r\t\x1e\x1f"))
        ):
            raise reader.fail(
                key,
                f"expected 'embedded' or an absolute folder of PostgreSQL binaries, got {item!r}",
                "e.g. servers: [embedded, /usr/lib/postgresql/15/bin]",
            )
        item = item.rstrip("/") or "/"
        if item in out:
            raise reader.fail(key, f"server '{item}' is listed twice")
        out.append(item)
    return tuple(out)


def _check_branches(reader: _Reader, data: dict[str, Any], profile: Profile) -> None:
    """TPC-B-like updates one of ``scale`` branch rows in every transaction: with more clients
    than branches, the clients queue on those row locks and the trial measures that queue, not
    the server. The guides' rule is scale ≥ clients; a profile that breaks it is refused."""
    tpcb = [w.name for w in profile.workloads if any(s.builtin == "tpcb-like" for s in w.scripts)]
    if not tpcb:
        return
    scale, clients = min(profile.scales), max(profile.clients)
    if clients > scale:
        raise reader.fail(
            "clients",
            f"workload '{tpcb[0]}' (TPC-B-like) at scale {scale} with {clients} clients: more "
            f"clients than branches, so they queue on the {scale} branch rows",
            f"make every scale at least {clients} (scale ≥ clients), or run TPC-B-like in a "
            "profile of its own with fewer clients",
        )


#: PostgreSQL's default commit_siblings.
COMMIT_SIBLINGS_DEFAULT = 5


def _check_commit_delay(reader: _Reader, data: dict[str, Any], profile: Profile) -> None:
    """commit_delay waits before a commit's flush only when at least ``commit_siblings`` other
    transactions are active (PostgreSQL's MinimumActiveBackends, which never counts the
    committing backend). With at most C clients there are never more than C − 1 others: a set
    whose commit_siblings is C or more never delays, and measures nothing of commit_delay. Such
    a set is refused (it ran unnoticed in the durability campaign of November 27, 2026: 4
    clients, commit_siblings 4). analyze.confounds.inert_commit_delay names the same case in
    run files that were measured before this check."""
    most_others = max(profile.clients) - 1
    for name, values in profile.settings_sets:
        settings = dict(values)
        delay = settings.get("commit_delay", "0").strip("'\"")
        if not delay.isdigit() or int(delay) == 0:
            continue
        siblings = settings.get("commit_siblings", str(COMMIT_SIBLINGS_DEFAULT)).strip("'\"")
        if siblings.isdigit() and int(siblings) > most_others:
            raise reader.fail(
                f"settings_sets.{name}" if "settings_sets" in data else "settings",
                f"set '{name}': commit_delay waits only when at least commit_siblings "
                f"({siblings}) other transactions are active, and {most_others + 1} clients "
                f"leave at most {most_others} others: the delay never applies",
                f"set commit_siblings to {most_others} or less, or run more clients"
                if most_others
                else "run more than one client",
            )


def _init_flags(reader: _Reader, data: dict[str, Any]) -> tuple[str, ...]:
    """Extra pgbench -i flags; never the scale, which comes from 'scales'."""
    init_flags_raw = data.get("init_flags", [])
    if not isinstance(init_flags_raw, list):
        raise reader.fail(
            "init_flags", "expected a list of pgbench -i flags", "e.g. [--partitions=4]"
        )
    init_flags = []
    for i, flag in enumerate(init_flags_raw):
        if not isinstance(flag, str) or not re.fullmatch(r"--?[A-Za-z][A-Za-z-]*(=[^\s]+)?", flag):
            raise reader.fail(
                f"init_flags.{i}", f"expected one flag like --partitions=4, got {flag!r}"
            )
        if re.match(r"-(s|-scale|i|-initialize)\b", flag):
            raise reader.fail(f"init_flags.{i}", "the scale comes from 'scales'", "remove it")
        init_flags.append(flag)
    return tuple(init_flags)


def _settings_sets(
    reader: _Reader, data: dict[str, Any], known_settings: set[str] | None
) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """The server settings of each set: ``settings`` for all, each set's own on top of them.
    Without sets, one set: "defaults" (nothing set) or "profile" (``settings`` only)."""
    base = _settings(reader, "settings", data.get("settings"), known_settings)
    sets_raw = data.get("settings_sets")
    if sets_raw is None:
        return (("defaults" if not base else "profile", base),)
    if not isinstance(sets_raw, dict) or not sets_raw:
        raise reader.fail(
            "settings_sets",
            "expected a mapping of set names to settings",
            "e.g. settings_sets: {sync-on: {}, sync-off: {synchronous_commit: 'off'}}",
        )
    settings_sets: list[tuple[str, tuple[tuple[str, str], ...]]] = []
    for set_name, values in sets_raw.items():
        set_name = str(set_name)
        if not WORKLOAD_NAME_RE.match(set_name):
            raise reader.fail(
                f"settings_sets.{set_name}",
                f"'{set_name}' is not a short lower-case name",
                "e.g. sync-off",
            )
        own = _settings(reader, f"settings_sets.{set_name}", values, known_settings)
        merged = dict(base)
        merged.update(own)
        settings_sets.append((set_name, tuple(merged.items())))
    return tuple(settings_sets)


def _check_trial_limit(reader: _Reader, data: dict[str, Any], profile: Profile) -> None:
    """At most MAX_TRIALS trials, named by the dimension that contributes most."""
    count = trial_count(profile)
    if count > MAX_TRIALS:
        factors = trial_factors(profile)
        biggest = max(factors, key=lambda key: factors[key])
        product = " × ".join(f"{n} {key}" for key, n in factors.items() if n > 1)
        raise reader.fail(
            biggest if biggest in data else "repeats",
            f"the profile expands to {count:,} trials ({product}); the limit is {MAX_TRIALS:,}",
            "fewer repeats or shorter lists, or split it into several profiles",
        )


def _long_number_error(path: Path) -> ProfileError:
    """The located error for a number too long for Python to read (the loader's ValueError)."""
    line = None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    match = re.search(r"\d{1000,}", text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
    return ProfileError(
        "a number with thousands of digits",
        path=str(path),
        line=line,
        hint=f"pgbench accepts whole numbers up to {PGBENCH_INT_MAX}",
    )


def trial_factors(profile: Profile) -> dict[str, int]:
    """How many values each dimension of the plan has; their product is the trial count."""
    return {
        "sessions": profile.sessions,
        "servers": max(1, len(profile.servers)),
        "scales": len(profile.scales),
        "repeats": profile.repeats,
        "settings_sets": len(profile.settings_sets),
        "workloads": len(profile.workloads),
        "query_modes": len(profile.query_modes),
        "rates": len(profile.rates),
        "clients": len(profile.clients),
    }


def trial_count(profile: Profile) -> int:
    """The number of trials ``expand`` makes, computed without making them."""
    return math.prod(trial_factors(profile).values())


# ---------------------------------------------------------------------------------------------
# expanding


def client_cores() -> int:
    """Cores this process may run on (honours affinity and cpusets)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_for(clients: int, cores: int) -> int:
    """pgbench threads: one per client up to the client machine's cores, dividing clients."""
    threads = max(1, min(clients, cores))
    while clients % threads:
        threads -= 1
    return threads


def _group_id(config: dict[str, Any]) -> str:
    """A hash of one configuration: the same in every repeat of it. Only part of
    ``repeat.group``: ``kb import`` puts the machine and the bench's start before it
    (``trial.repeat_group``), so that two machines or two sessions running one profile are
    never taken for repeats of each other."""
    blob = json.dumps(config, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:8]


def _number(value: float) -> str:
    """A number for pgbench's command line, exactly as given: ``f"{v:g}"`` kept 6 digits, so
    a rate of 1234567.5 became ``--rate=1.23457e+06``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _run_args(
    profile: Profile, workload: Workload, mode: str, rate: float | None, clients: int, threads: int
) -> list[str]:
    args = [s.arg() for s in workload.scripts]
    args += [f"--client={clients}", f"--jobs={threads}", f"--protocol={mode}"]
    if rate is not None:
        args.append(f"--rate={_number(rate)}")
        if profile.latency_limit_ms is not None:
            args.append(f"--latency-limit={_number(profile.latency_limit_ms)}")
    return args


def draw_seed() -> int:
    """A seed for a profile that names none (recorded in every run file, so the order can be
    made again: put it in the profile as ``seed: N``)."""
    return secrets.randbelow(SEED_LIMIT)


def _configurations(profile: Profile, cores: int) -> list[dict[str, Any]]:
    """One entry per configuration: the fields a Trial needs but its place in the order."""
    if profile.duration_s is not None:
        length = [f"--time={profile.duration_s}"]
    else:
        length = [f"--transactions={profile.transactions}"]
    measured = ["--progress=1", "--report-per-command"]
    if profile.log_sampling_rate is None:
        measured += ["--log", "--sampling-rate=auto"]
    elif profile.log_sampling_rate > 0:
        measured += ["--log", f"--sampling-rate={_number(profile.log_sampling_rate)}"]
    configs = []
    for server in profile.servers or ("",):
        configs += _configurations_of(profile, server, length, measured, cores)
    return configs


def _configurations_of(
    profile: Profile, server: str, length: list[str], measured: list[str], cores: int
) -> list[dict[str, Any]]:
    configs = []
    for scale in profile.scales:
        init_args = ("--initialize", f"--scale={scale}", "--quiet", *profile.init_flags)
        for set_name, settings in profile.settings_sets:
            for workload in profile.workloads:
                for mode in profile.query_modes:
                    for rate in profile.rates:
                        for clients in profile.clients:
                            threads = min(profile.threads or threads_for(clients, cores), clients)
                            run = _run_args(profile, workload, mode, rate, clients, threads)
                            config = {
                                "scale": scale,
                                "init": init_args,
                                "settings": settings,
                                "run": [*run, *length],
                                "warmup_s": profile.warmup_s,
                                "reset": profile.reset,
                            }
                            if server:
                                config["server"] = server
                            warmup = (
                                (*run, f"--time={profile.warmup_s}") if profile.warmup_s else ()
                            )
                            configs.append(
                                {
                                    "group": _group_id(config),
                                    "scale": scale,
                                    "settings_name": set_name,
                                    "settings": tuple(f"{k}={v}" for k, v in settings),
                                    "workload": workload.name,
                                    "pgbench_args": (*run, *length, *measured),
                                    "seconds": profile.duration_s or 0,
                                    "warmup_args": warmup,
                                    "init_args": init_args,
                                    "reset": profile.reset,
                                    "script_files": tuple(
                                        str(s.file) for s in workload.scripts if s.file
                                    ),
                                    "logged_latencies": (
                                        profile.logged_latencies
                                        if profile.log_sampling_rate is None
                                        else 0
                                    ),
                                    "server": server,
                                }
                            )
    return configs


def expand(profile: Profile, *, cores: int | None = None, seed: int | None = None) -> list[Trial]:
    """Every trial of the profile in the order bench.sh runs them: session by session, round
    (repeat) by round, and inside each round every configuration once, in an order shuffled by
    ``random.Random(seed)`` — the profile's seed, else ``seed``, else one drawn now. The same
    seed and profile give the same order."""
    if cores is not None and (isinstance(cores, bool) or cores < 1):
        raise UsageError(
            f"--cores: expected a whole number ≥ 1, got {cores}",
            hint="the client machine's cores, e.g. --cores 4; leave it out to use nproc",
        )
    count = trial_count(profile)
    if count > MAX_TRIALS:
        raise ProfileError(
            f"the profile expands to {count:,} trials; the limit is {MAX_TRIALS:,}",
            path=str(profile.path),
            hint="fewer repeats or shorter lists",
        )
    cores = cores or client_cores()
    if profile.seed is not None:
        seed = profile.seed
    elif seed is None:
        seed = draw_seed()
    rng = random.Random(seed)
    configs = _configurations(profile, cores)
    trials: list[Trial] = []
    for session in range(1, profile.sessions + 1):
        position = 0
        for repeat in range(1, profile.repeats + 1):
            order = list(configs)
            rng.shuffle(order)
            for config in order:
                position += 1
                trials.append(
                    Trial(
                        index=len(trials) + 1,
                        total=0,
                        repeat=repeat,
                        repeats=profile.repeats,
                        session=session,
                        sessions=profile.sessions,
                        position=position,
                        seed=seed,
                        **config,
                    )
                )
    total = len(trials)
    return [Trial(**{**t.__dict__, "total": total}) for t in trials]


def render_plan(profile: Profile, *, cores: int | None = None) -> str:
    """The plan for bash: one line per trial (format in the module doc)."""
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
            UNIT_SEP.join(t.warmup_args),
            UNIT_SEP.join(t.init_args),
            t.reset,
            UNIT_SEP.join(t.script_files),
            str(t.session),
            str(t.sessions),
            str(t.position),
            str(t.seed),
            str(t.logged_latencies),
            t.server,
        ]
        lines.append(FIELD_SEP.join(fields))
    return "".join(line + "\n" for line in lines)


#: What the plan's estimate adds to the trials' own seconds, measured on the 2-core development
#: machine (docs/harness.md, "What an interleaved design costs"): per trial (reset by template
#: clone, checkpoint, counters, kb import), per restart of the server with other settings,
#: per session (initdb and the first start), and per unit of scale initialised (pgbench -i).
PER_TRIAL_S = 3
PER_RESTART_S = 2
PER_SESSION_S = 4
PER_SCALE_UNIT_S = 0.5


def restarts_of(trials: list[Trial]) -> int:
    """Server restarts the order asks for: one whenever the settings set changes inside a
    session (a session's first set is its first start, counted with the session)."""
    count = 0
    for before, after in itertools.pairwise(trials):
        same_server = (before.settings_name, before.server) == (after.settings_name, after.server)
        if before.session == after.session and not same_server:
            count += 1
    return count


def estimate_seconds(profile: Profile, trials: list[Trial]) -> int:
    """A rough wall time: the trials and their warm-ups, and what the harness spends around
    them (the costs above)."""
    warmups = profile.warmup_s * len(trials)
    builds = max(1, len(profile.servers))
    init = (PER_SCALE_UNIT_S * sum(profile.scales) + PER_SESSION_S) * builds
    return int(
        sum(t.seconds for t in trials)
        + warmups
        + PER_TRIAL_S * len(trials)
        + PER_RESTART_S * restarts_of(trials)
        + init * profile.sessions
    )


def describe_plan(profile: Profile, *, cores: int | None = None) -> str:
    """The plan for people: one row per trial and an estimate of the wall time."""
    seed = profile.seed if profile.seed is not None else draw_seed()
    trials = expand(profile, cores=cores, seed=seed)
    rows = [("#", "session", "scale", "settings", "workload", "repeat", "pgbench arguments")]
    for t in trials:
        shown = [
            a
            for a in t.pgbench_args
            if not a.startswith(("--log", "--sampling", "--progress", "--report"))
        ]
        rows.append(
            (
                str(t.index),
                f"{t.session}/{t.sessions}",
                str(t.scale),
                f"{t.settings_name} on {t.server}" if t.server else t.settings_name,
                t.workload,
                f"{t.repeat}/{t.repeats}",
                " ".join(shown),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    out = [f"{profile.name}: {profile.description}"]
    for name, settings in profile.settings_sets:
        shown = ", ".join(f"{k}={v}" for k, v in settings) or "server defaults"
        out.append(f"  settings {name}: {shown}")
    for server in profile.servers:
        out.append(f"  server {server} (a cluster of its own, interleaved with the others)")
    if profile.seed is not None:
        out.append(f"  order: shuffled in each round with the profile's seed {seed}")
    else:
        out.append(
            f"  order: shuffled in each round with seed {seed}, drawn now (a bench draws its "
            "own; put seed: N in the profile to repeat an order)"
        )
    out.append("")
    for row in rows:
        out.append(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1]
        )
    total = estimate_seconds(profile, trials)
    minutes = math.ceil(total / 6) / 10
    if profile.log_sampling_rate is None:
        log = (
            f" --log, the sampling rate picked for {profile.logged_latencies:,} logged "
            "latencies a run)"
        )
    elif profile.log_sampling_rate:
        log = f" --log --sampling-rate={_number(profile.log_sampling_rate)})"
    else:
        log = ")"
    out.append("")
    out.append(
        f"{len(trials)} trials in {profile.sessions} session(s), {restarts_of(trials)} server "
        f"restarts, about {minutes:g} min ({_clock(total)}; every trial also runs -P 1 -r{log}"
    )
    return "\n".join(out) + "\n"


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
