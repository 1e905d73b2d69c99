"""The plan handed to ``scripts/bench.sh`` (``kb plan --for-bash``): one line per trial, fields
separated by 0x1e, lists inside a field by 0x1f (neither is whitespace, so empty fields survive
``read``)::

    index total group repeat repeats scale settings_name settings workload pgbench_args
    seconds warmup_args init_args reset script_files session sessions position seed
    logged_latencies server flush rate_percent calibration_key calibration_set
    calibration_settings calibration_s rerun_disturbed

``logged_latencies`` is 0 when the profile fixes the sampling rate; otherwise pgbench_args
hold ``--sampling-rate=auto``, which bash replaces by the rate ``bench.sampling`` picks.
``pgbench_args`` exclude the connection and the database name, which bash adds. ``group`` is a
hash of the configuration; ``kb import`` makes ``repeat.group`` of it, the machine and the
session's start and its token (``<machine>-<YYYYMMDDTHHMMSSZ>-<token>-<hash>``). ``flush`` is
the emulated commit flush level (profile key flush_ms: native, native-traced or a target in
ms), empty without that key. ``rate_percent`` is set for a rate given as a share of the
maximum ("70%" → 70): pgbench_args then hold ``--rate=auto``, and bash replaces it by that share
of the tps an unthrottled calibration run measured at the start of the session, one per
``calibration_key``, under the settings set ``calibration_set`` (its ``calibration_settings``),
for ``calibration_s`` seconds. ``rerun_disturbed`` is how many times bash runs the trial again,
at the end of its session, while its run file says it was disturbed.

Bash reads these fields by position: add a field at the end, never between.
"""

from __future__ import annotations

from pgbench_kb.bench.profile.expansion import expand
from pgbench_kb.bench.profile.model import Profile

FIELD_SEP = "\x1e"
UNIT_SEP = "\x1f"


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
            t.flush,
            t.rate_percent,
            t.calibration_key,
            t.calibration_set,
            UNIT_SEP.join(t.calibration_settings),
            str(t.calibration_s) if t.calibration_key else "",
            str(t.rerun_disturbed),
        ]
        lines.append(FIELD_SEP.join(fields))
    return "".join(line + "\n" for line in lines)
