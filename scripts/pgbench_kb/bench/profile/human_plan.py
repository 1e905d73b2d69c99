"""The plan for people (``kb plan PROFILE``): the settings sets, servers and order, one row per
trial, and an estimate of the wall time."""

from __future__ import annotations

import itertools
import math

from pgbench_kb.bench.profile.expansion import draw_seed, expand, pgbench_number
from pgbench_kb.bench.profile.model import (
    FLUSH_NATIVE,
    FLUSH_NATIVE_TRACED,
    Profile,
    Trial,
)

#: What the plan's estimate adds to the trials' own seconds, measured on the 2-core development
#: machine (docs/harness.md, "What an interleaved design costs"): per trial (reset by template
#: clone, checkpoint, counters, kb import), per restart of the server with other settings,
#: per session (initdb and the first start), and per unit of scale initialised (pgbench -i).
PER_TRIAL_S = 3
PER_RESTART_S = 2
PER_SESSION_S = 4
PER_SCALE_UNIT_S = 0.5
#: The storage fingerprint of a session (pg_test_fsync cut short after the WAL's method, and
#: 8 kB writes with fdatasync, in the data and the WAL folders), and the check of each emulated
#: flush level under the tracer (docs/harness.md, "The storage fingerprint").
PER_SESSION_FLUSH_S = 5
PER_FLUSH_LEVEL_S = 4


def restarts_of(trials: list[Trial]) -> int:
    """Server restarts the order asks for: one whenever the settings set changes inside a
    session (a session's first set is its first start, counted with the session)."""
    count = 0
    for before, after in itertools.pairwise(trials):
        same_server = (before.settings_name, before.server, before.flush) == (
            after.settings_name,
            after.server,
            after.flush,
        )
        if before.session == after.session and not same_server:
            count += 1
    return count


def estimate_seconds(profile: Profile, trials: list[Trial]) -> int:
    """A rough wall time: the trials and their warm-ups, and what the harness spends around
    them (the costs above)."""
    warmups = profile.warmup_s * len(trials)
    builds = max(1, len(profile.servers))
    init = (PER_SCALE_UNIT_S * sum(profile.scales) + PER_SESSION_S) * builds
    init += PER_SESSION_FLUSH_S + PER_FLUSH_LEVEL_S * sum(
        1 for level in profile.flush_levels if level != FLUSH_NATIVE
    )
    # One calibration run (and two restarts around it) per calibration key and session.
    calibrations = len({t.calibration_key for t in trials if t.calibration_key})
    init += calibrations * (profile.rate_calibration_s + PER_TRIAL_S + 2 * PER_RESTART_S)
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
                _settings_cell(t),
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
    for level in profile.flush_levels:
        out.append(f"  flush {_flush_words(level)}")
    shares = sorted({t.rate_percent for t in trials if t.rate_percent}, key=float)
    if shares:
        out.append(
            f"  rate {', '.join(s + '%' for s in shares)} of the maximum: --rate=auto is that "
            f"share of the tps of an unthrottled {profile.rate_calibration_s} s run, made in "
            "each session before the first trial that needs it, one per scale, workload, mode "
            "and clients, under settings "
            f"{profile.settings_sets[0][0]}"
        )
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
        log = f" --log --sampling-rate={pgbench_number(profile.log_sampling_rate)})"
    else:
        log = ")"
    out.append("")
    out.append(
        f"{len(trials)} trials in {profile.sessions} session(s), {restarts_of(trials)} server "
        f"restarts, about {minutes:g} min ({_clock(total)}; every trial also runs -P 1 -r{log}"
    )
    if profile.rerun_disturbed:
        times = "once" if profile.rerun_disturbed == 1 else f"up to {profile.rerun_disturbed} times"
        out.append(
            f"A trial marked disturbed (other processes or steal above the limits) runs again "
            f"{times} at the end of its session; the disturbed run file is kept and left out of "
            "every group."
        )
    return "\n".join(out) + "\n"


def _flush_short(level: str) -> str:
    return level if level in (FLUSH_NATIVE, FLUSH_NATIVE_TRACED) else f"{level} ms"


def _flush_words(level: str) -> str:
    """What a flush level does, for the plan's head."""
    if level == FLUSH_NATIVE:
        return "native: the device's own commit flush, no tracer"
    if level == FLUSH_NATIVE_TRACED:
        return "native-traced: the server under strace with no added delay (the tracer's cost)"
    return (
        f"{level} ms: emulated, the server under strace adding (target − the native flush "
        "measured at each session's start) to every fsync and fdatasync; pg_test_fsync under "
        "the same injection checks the latency reached"
    )


def _settings_cell(t: Trial) -> str:
    cell = f"{t.settings_name} on {t.server}" if t.server else t.settings_name
    return f"{cell}, flush {_flush_short(t.flush)}" if t.flush else cell


def _clock(seconds: float) -> str:
    whole = int(seconds)
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
