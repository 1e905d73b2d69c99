"""The limits that make a trial **disturbed** (the run format's ``machine_load.disturbed``):
the bench applies them when it records a trial (``bench/quiet.py``), and ``kb check`` applies
the same ones when it reads a run file back, so they live with the run format, which both
stages use (docs/harness.md says why these values)."""

from __future__ import annotations

#: Other processes may use at most this share of one core during a trial (10%).
OTHER_CORE_SHARE_LIMIT = 0.10
#: Steal may be at most this percentage of all CPU time during a trial.
STEAL_PCT_LIMIT = 2.0
