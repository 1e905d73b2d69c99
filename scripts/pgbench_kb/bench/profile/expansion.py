"""A profile expanded into its trials: every configuration (server × scale × settings set ×
workload × query mode × rate × clients) once per round, in an order shuffled by
``random.Random(seed)``, round (repeat) by round and session by session.

Every axis is interleaved, server builds, scale and settings sets included: a template database
per scale (and build) is made when a session starts, and the server restarts only when the
settings set or the build changes (about 0.3 s each, measured: docs/harness.md). A slow drift of
the machine then spreads over every configuration instead of biasing some, and the order can be
made again from the seed the run files record (``repeat.design.seed``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
import secrets
from typing import Any

from pgbench_kb.bench.profile.model import (
    MAX_TRIALS,
    SEED_LIMIT,
    Profile,
    Trial,
    Workload,
    rate_percent,
)
from pgbench_kb.errors import ProfileError, UsageError


def trial_factors(profile: Profile) -> dict[str, int]:
    """How many values each dimension of the plan has; their product is the trial count."""
    return {
        "sessions": profile.sessions,
        "servers": max(1, len(profile.servers)),
        "scales": len(profile.scales),
        "repeats": profile.repeats,
        "settings_sets": len(profile.settings_sets),
        "flush_ms": max(1, len(profile.flush_levels)),
        "workloads": len(profile.workloads),
        "query_modes": len(profile.query_modes),
        "rates": len(profile.rates),
        "clients": len(profile.clients),
    }


def trial_count(profile: Profile) -> int:
    """The number of trials ``expand`` makes, computed without making them."""
    return math.prod(trial_factors(profile).values())


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


def pgbench_number(value: float) -> str:
    """A number for pgbench's command line, exactly as given: ``f"{v:g}"`` kept 6 digits, so
    a rate of 1234567.5 became ``--rate=1.23457e+06``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _run_args(
    profile: Profile,
    workload: Workload,
    mode: str,
    rate: float | str | None,
    clients: int,
    threads: int,
) -> list[str]:
    args = [s.arg() for s in workload.scripts]
    args += [f"--client={clients}", f"--jobs={threads}", f"--protocol={mode}"]
    if rate is not None:
        # A share of the maximum (a str): bash measures the maximum and puts the rate in.
        args.append("--rate=auto" if isinstance(rate, str) else f"--rate={pgbench_number(rate)}")
        if profile.latency_limit_ms is not None:
            args.append(f"--latency-limit={pgbench_number(profile.latency_limit_ms)}")
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
        measured += ["--log", f"--sampling-rate={pgbench_number(profile.log_sampling_rate)}"]
    configs = []
    for server in profile.servers or ("",):
        configs += _configurations_of(profile, server, length, measured, cores)
    return configs


def _configurations_of(
    profile: Profile, server: str, length: list[str], measured: list[str], cores: int
) -> list[dict[str, Any]]:
    configs = []
    for flush in profile.flush_levels or ("",):
        configs += _configurations_at(profile, server, flush, length, measured, cores)
    return configs


def _configurations_at(
    profile: Profile, server: str, flush: str, length: list[str], measured: list[str], cores: int
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
                            if flush:
                                config["flush_ms"] = flush
                            percent = rate_percent(rate)
                            if percent:
                                config["rate_percent"] = percent
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
                                    "flush": flush,
                                    **_calibration(
                                        profile,
                                        percent,
                                        server,
                                        flush,
                                        scale,
                                        workload,
                                        mode,
                                        clients,
                                    ),
                                }
                            )
    return configs


def _calibration(
    profile: Profile,
    percent: str,
    server: str,
    flush: str,
    scale: int,
    workload: Workload,
    mode: str,
    clients: int,
) -> dict[str, Any]:
    """For a rate given as a share of the maximum: the trials that share one calibration run
    (every settings set and share of one server, flush, scale, workload, mode and clients), and
    the settings set it runs under, the profile's first."""
    if not percent:
        return {}
    name, settings = profile.settings_sets[0]
    key = json.dumps([server, flush, scale, workload.name, mode, clients]).encode()
    return {
        "rate_percent": percent,
        "calibration_key": hashlib.sha256(key).hexdigest()[:8],
        "calibration_set": name,
        "calibration_settings": tuple(f"{k}={v}" for k, v in settings),
        "calibration_s": profile.rate_calibration_s,
    }


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
                        rerun_disturbed=profile.rerun_disturbed,
                        **config,
                    )
                )
    total = len(trials)
    return [Trial(**{**t.__dict__, "total": total}) for t in trials]
