"""What a profile is once read (``Profile`` and its workloads and scripts), what one trial of
its plan is (``Trial``), and the limits both keep to."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

BUILTINS = ("tpcb-like", "simple-update", "select-only")
#: A profile's ``reset`` → the harness's name for it.
RESETS = {"template": "template-clone", "reinit": "reinit"}
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
# Settings the harness sets itself to keep the throwaway server private.
HARNESS_SETTINGS = ("listen_addresses", "unix_socket_directories", "port", "data_directory")
# Settings the harness sets on its server's log, to record when checkpoints ran.
HARNESS_LOG_SETTINGS = ("log_checkpoints", "log_timezone", "log_line_prefix")
#: PostgreSQL's default commit_siblings.
COMMIT_SIBLINGS_DEFAULT = 5


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


#: How long the unthrottled calibration run of a rate given as a share of the maximum lasts
#: unless the profile says (rate_calibration_s; docs/harness.md, "Rates as a share of the
#: maximum").
RATE_CALIBRATION_S = 30


def rate_percent(rate: float | str | None) -> str:
    """The percentage of a rate given as a share of the measured maximum ("70%" → "70"),
    else ""."""
    return rate[:-1] if isinstance(rate, str) and rate.endswith("%") else ""


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
    #: pgbench --rate values: a number (tps), a share of the measured maximum ("70%", see
    #: RATE_CALIBRATION_S), or None (unthrottled).
    rates: tuple[float | str | None, ...]
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
    #: Commit flush latencies emulated (profile key flush_ms): "native" (the device's own, no
    #: tracer), "native-traced" (the tracer with no added delay) or a target total in ms
    #: ("2", "0.5"); empty: the key is absent (no emulation, no flush axis).
    flush_levels: tuple[str, ...] = ()
    #: Seconds of the calibration run of rates given as a share of the maximum.
    rate_calibration_s: int = RATE_CALIBRATION_S
    #: How many times a disturbed trial runs again at the end of its session (0: never).
    rerun_disturbed: int = 0


#: flush_ms entries that are not a target: the device alone, and the tracer with no delay.
FLUSH_NATIVE = "native"
FLUSH_NATIVE_TRACED = "native-traced"


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
    #: The flush level (Profile.flush_levels); "" without flush_ms.
    flush: str = ""
    #: A rate given as a share of the maximum: the percentage ("70"); pgbench_args then hold
    #: --rate=auto, which bash replaces. "" otherwise.
    rate_percent: str = ""
    #: Which trials share one calibration in a session (the configuration less its settings
    #: set and rate), and the settings set the calibration runs under (the profile's first).
    calibration_key: str = ""
    calibration_set: str = ""
    calibration_settings: tuple[str, ...] = ()
    #: How long the calibration runs (RATE_CALIBRATION_S); 0 without one.
    calibration_s: int = 0
    #: How many times this trial runs again at the end of its session while it is disturbed.
    rerun_disturbed: int = 0
