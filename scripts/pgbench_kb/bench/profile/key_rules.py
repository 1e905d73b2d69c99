"""The rules of a profile that its schema (``runs/schemas/profile.schema.json``) cannot say: one
key against another, a script file that must exist, names once each, settings the harness
owns, and what the whole plan would do (its size, TPC-B-like's branch rows, a commit_delay that
can never apply).

Each rule is a small function of the schema-valid data (``Rules``: data, lines, the file) that
returns the problems it finds, ``Located`` at their lines; ``data_rules`` runs before the
profile is built, ``plan_rules`` on the built profile. The first problem of the first rule that
finds one is what ``kb plan`` raises; ``kb check`` reports them all.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgbench_kb.bench.profile.expansion import trial_count, trial_factors
from pgbench_kb.bench.profile.model import (
    BUILTINS,
    COMMIT_SIBLINGS_DEFAULT,
    DEFAULT_LOGGED_LATENCIES,
    HARNESS_LOG_SETTINGS,
    HARNESS_SETTINGS,
    MAX_TRIALS,
    Profile,
)
from pgbench_kb.runs.documents import Located
from pgbench_kb.runs.runfile import Loaded


@dataclass(frozen=True)
class Rules:
    """What a rule reads: the schema-valid data, its lines, the file and the server's setting
    names (None: not known)."""

    loaded: Loaded
    path: Path
    shown: str
    known_settings: set[str] | None = None

    @property
    def data(self) -> dict[str, Any]:
        return self.loaded.data

    def at(self, key: str, message: str, hint: str | None = None) -> Located:
        return Located(self.shown, self.loaded.line_of(key), key, message, hint)


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _key(key: str, value: Any, index: int) -> str:
    """The dotted key of item ``index`` of a key that takes one value or a list."""
    return f"{key}.{index}" if isinstance(value, list) else key


def length(r: Rules) -> list[Located]:
    """Exactly one of duration_s (pgbench -T) and transactions (pgbench -t)."""
    has_t, has_n = "duration_s" in r.data, "transactions" in r.data
    if has_t and has_n:
        return [
            r.at(
                "transactions",
                "give only one of duration_s (pgbench -T) and transactions (pgbench -t)",
                "remove one of them",
            )
        ]
    if not has_t and not has_n:
        return [
            Located(
                r.shown,
                1,
                "duration_s",
                "missing",
                "add 'duration_s:' (pgbench -T) or 'transactions:' (pgbench -t)",
            )
        ]
    return []


def description(r: Rules) -> list[Located]:
    if not str(r.data["description"]).strip():
        return [r.at("description", "expected one line of text")]
    return []


def latency_limit(r: Rules) -> list[Located]:
    """pgbench -L applies only to rate-limited runs."""
    rates = _listed(r.data.get("rates", [None]))
    if r.data.get("latency_limit_ms") is not None and any(rate is None for rate in rates):
        return [
            r.at(
                "latency_limit_ms",
                "pgbench applies a latency limit only to rate-limited runs",
                "give every entry of rates a number, or remove latency_limit_ms",
            )
        ]
    return []


def logged_latencies(r: Rules) -> list[Located]:
    """A number of latencies to aim at means the harness picks the sampling rate."""
    logged = r.data.get("logged_latencies", DEFAULT_LOGGED_LATENCIES)
    if logged != DEFAULT_LOGGED_LATENCIES and r.data.get("log_sampling_rate", "auto") != "auto":
        return [
            r.at(
                "logged_latencies",
                "the profile fixes log_sampling_rate, so the harness does not pick one",
                "remove log_sampling_rate to let the harness aim at this many latencies",
            )
        ]
    return []


def scripts(r: Rules) -> list[Located]:
    """A script is exactly one of builtin and file; a file exists beside the profile; a
    workload's name is used once."""
    found = []
    raw = r.data["workloads"]
    names: list[str] = []
    for i, workload in enumerate(_listed(raw)):
        key = _key("workloads", raw, i)
        name = workload if isinstance(workload, str) else workload["name"]
        if name in names:
            found.append(r.at(key, f"workload '{name}' is listed twice"))
        names.append(name)
        if isinstance(workload, str):
            continue
        for j, script in enumerate(workload["scripts"]):
            where = f"{key}.scripts.{j}"
            if ("builtin" in script) == ("file" in script):
                found.append(r.at(where, "give exactly one of builtin or file"))
            elif "file" in script and not (r.path.parent / script["file"]).resolve().is_file():
                path = (r.path.parent / script["file"]).resolve()
                found.append(
                    r.at(
                        f"{where}.file",
                        f"no such script file '{script['file']}' (looked in {path.parent})",
                        "paths are relative to the profile's folder",
                    )
                )
    return found


def _setting_problem(r: Rules, key: str, name: str, value: Any) -> Located | None:
    if name in HARNESS_SETTINGS:
        return r.at(
            key,
            f"'{name}' is set by the harness (the server listens only on a private socket)",
            "remove it from the profile",
        )
    if name in HARNESS_LOG_SETTINGS:
        return r.at(
            key,
            f"'{name}' is set by the harness (its server logs every checkpoint, in UTC, "
            "so that a run can say when they ran)",
            "remove it from the profile",
        )
    known = r.known_settings
    if known is not None and name not in known and "." not in name:
        close = difflib.get_close_matches(name, sorted(known), n=1)
        return r.at(
            key,
            f"unknown server setting '{name}'",
            f"did you mean '{close[0]}'?"
            if close
            else "`postgres --describe-config` lists the names this server knows",
        )
    if isinstance(value, str) and (not value.strip() or any(c in value for c in "\n\r\t\x1e\x1f")):
        return r.at(
            key, f"expected a setting value (text, number, on/off), got {value!r}", "e.g. 128MB"
        )
    return None


def settings(r: Rules) -> list[Located]:
    """No setting the harness sets itself; names the server knows (when it was asked); one-line
    values; at least one settings set when settings_sets is given."""
    groups = [("settings", r.data.get("settings") or {})]
    sets = r.data.get("settings_sets")
    found = []
    if sets is not None and not sets:
        found.append(
            r.at(
                "settings_sets",
                "expected a mapping of set names to settings",
                "e.g. settings_sets: {sync-on: {}, sync-off: {synchronous_commit: 'off'}}",
            )
        )
    groups += [(f"settings_sets.{name}", values or {}) for name, values in (sets or {}).items()]
    for key, values in groups:
        for name, value in values.items():
            problem = _setting_problem(r, f"{key}.{name}", str(name), value)
            if problem is not None:
                found.append(problem)
    return found


def init_flags(r: Rules) -> list[Located]:
    """The scale comes from 'scales', never from pgbench -i flags."""
    return [
        r.at(f"init_flags.{i}", "the scale comes from 'scales'", "remove it")
        for i, flag in enumerate(r.data.get("init_flags") or [])
        if re.match(r"-(s|-scale|i|-initialize)\b", flag)
    ]


def servers(r: Rules) -> list[Located]:
    """``embedded`` or an absolute folder of PostgreSQL binaries, each build once (a trailing
    / does not make another). Whether a folder holds a server is checked by bench.sh."""
    raw = r.data.get("servers")
    seen: list[str] = []
    found = []
    for i, item in enumerate(_listed(raw) if raw is not None else []):
        if not (
            item == "embedded"
            or (item.startswith("/") and not any(c in item for c in "\n\r\t\x1e\x1f"))
        ):
            found.append(
                r.at(
                    _key("servers", raw, i),
                    "expected 'embedded' or an absolute folder of PostgreSQL binaries, "
                    f"got {item!r}",
                    "e.g. servers: [embedded, /usr/lib/postgresql/15/bin]",
                )
            )
            continue
        item = item.rstrip("/") or "/"
        if item in seen:
            found.append(r.at(_key("servers", raw, i), f"server '{item}' is listed twice"))
        seen.append(item)
    return found


def trial_limit(r: Rules, profile: Profile) -> list[Located]:
    """At most MAX_TRIALS trials, named by the dimension that contributes most."""
    count = trial_count(profile)
    if count <= MAX_TRIALS:
        return []
    factors = trial_factors(profile)
    biggest = max(factors, key=lambda key: factors[key])
    product = " × ".join(f"{n} {key}" for key, n in factors.items() if n > 1)
    return [
        r.at(
            biggest if biggest in r.data else "repeats",
            f"the profile expands to {count:,} trials ({product}); the limit is {MAX_TRIALS:,}",
            "fewer repeats or shorter lists, or split it into several profiles",
        )
    ]


def branches(r: Rules, profile: Profile) -> list[Located]:
    """TPC-B-like updates one of ``scale`` branch rows in every transaction: with more clients
    than branches, the clients queue on those row locks and the trial measures that queue, not
    the server. The guides' rule is scale ≥ clients; a profile that breaks it is refused."""
    tpcb = [w.name for w in profile.workloads if any(s.builtin == BUILTINS[0] for s in w.scripts)]
    scale, clients = min(profile.scales), max(profile.clients)
    if not tpcb or clients <= scale:
        return []
    return [
        r.at(
            "clients",
            f"workload '{tpcb[0]}' (TPC-B-like) at scale {scale} with {clients} clients: more "
            f"clients than branches, so they queue on the {scale} branch rows",
            f"make every scale at least {clients} (scale ≥ clients), or run TPC-B-like in a "
            "profile of its own with fewer clients",
        )
    ]


def commit_delay(r: Rules, profile: Profile) -> list[Located]:
    """commit_delay waits before a commit's flush only when at least ``commit_siblings`` other
    transactions are active (PostgreSQL's MinimumActiveBackends, which never counts the
    committing backend). With at most C clients there are never more than C − 1 others: a set
    whose commit_siblings is C or more never delays, and measures nothing of commit_delay. Such
    a set is refused (it ran unnoticed in the durability campaign of November 27, 2026: 4
    clients, commit_siblings 4). analyze.confounds.inert_commit_delay names the same case in
    run files that were measured before this check."""
    most_others = max(profile.clients) - 1
    found = []
    for name, values in profile.settings_sets:
        settings = dict(values)
        delay = settings.get("commit_delay", "0").strip("'\"")
        if not delay.isdigit() or int(delay) == 0:
            continue
        siblings = settings.get("commit_siblings", str(COMMIT_SIBLINGS_DEFAULT)).strip("'\"")
        if siblings.isdigit() and int(siblings) > most_others:
            found.append(
                r.at(
                    f"settings_sets.{name}" if "settings_sets" in r.data else "settings",
                    f"set '{name}': commit_delay waits only when at least commit_siblings "
                    f"({siblings}) other transactions are active, and {most_others + 1} clients "
                    f"leave at most {most_others} others: the delay never applies",
                    f"set commit_siblings to {most_others} or less, or run more clients"
                    if most_others
                    else "run more than one client",
                )
            )
    return found


#: Rules on the data, in the order ``kb plan`` applies them.
DATA_RULES: tuple[Callable[[Rules], list[Located]], ...] = (
    description,
    length,
    latency_limit,
    logged_latencies,
    scripts,
    settings,
    init_flags,
    servers,
)
#: Rules on the built profile, in order.
PLAN_RULES: tuple[Callable[[Rules, Profile], list[Located]], ...] = (
    trial_limit,
    branches,
    commit_delay,
)


def data_rules(r: Rules) -> list[Located]:
    return [problem for rule in DATA_RULES for problem in rule(r)]


def plan_rules(r: Rules, profile: Profile) -> list[Located]:
    return [problem for rule in PLAN_RULES for problem in rule(r, profile)]
