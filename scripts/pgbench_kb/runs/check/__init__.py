"""``kb check``: validate run files, hardware notes and every other contributed file,
collecting every problem before reporting. Each problem is printed as
``path:line: field: message`` and the report ends with counts; errors make the command exit 1,
warnings alone do not.

Three layers, each a pure function of what the one before produced:

1. loading (``runs.runfile.read_run``): UTF-8, safe YAML, no aliases, no duplicate keys, size
   limit; a file in the exact form ``kb import`` writes is read by the fast reader
   (``runs.fastyaml``), which gives the same data and key lines (or gives up, and the full
   loader reads the file);
2. the schema (``runs.schema``): types, enums, required and unknown keys, with "did you mean";
3. meaning (this package): the rules one file can break, one module per section of a run file,
   the raw output re-parsed and compared, and the rules across files.

Where a rule lives:

=================  =============================================================================
``benchmark.py``   the invocation: clients and threads, -T or -t, scripts, the command line
``results.py``     counts against tps and duration, samples, percentiles, progress series
``storage.py``     arrays, WAL placement, the controller's cache
``hosts.py``       server and client: where pgbench ran, CPU counts
``provenance.py``  dates, declared/masked/uncertain paths, what a contributed run must carry
``raw.py``         raw files present and unchanged; output and logs re-parsed and compared
``run.py``         one run file: load, schema, the rules above, placed at their lines
``plausible.py``   plausibility limits on figures (scale, clients, tps, durations, latencies)
``notes.py``       hardware notes
``content.py``     every file under content/ and data/: places, links, kinds, front matter of
                   the other pages (guides, sections, home, search)
``markdown.py``    a page's body: raw HTML, shortcodes, outside images, Markdown attributes
``tree.py``        the top level and config.toml: nothing that would steer Hugo (config/,
                   themes/, hugo.*…; mounts from outside the project)
``across.py``      across files: duplicate and case-colliding ids, raw outputs and
                   configurations; repeat groups (one contributor and session, indexes, of);
                   noisy repeat groups, outliers
``collect.py``     which files to check, stray files, the command itself (``check_paths``)
``report.py``      findings and the printed report
``values.py``      small helpers the rules share
=================  =============================================================================

Files are checked independently (in parallel worker processes when there are many), then the
small per-file summaries are compared.
"""

from __future__ import annotations

from pgbench_kb.runs.check.across import across_runs
from pgbench_kb.runs.check.collect import check_paths
from pgbench_kb.runs.check.notes import MAX_NOTE_BYTES, MAX_SLUG_CHARS, SLUG_RE, check_note
from pgbench_kb.runs.check.provenance import date_problem, masked_path_problem
from pgbench_kb.runs.check.raw import rules_raw_output, rules_transaction_log
from pgbench_kb.runs.check.report import (
    Finding,
    Issue,
    Report,
    RunSummary,
    format_report,
    one_line,
)
from pgbench_kb.runs.check.run import check_run, run_rules, single_run_issues
from pgbench_kb.runs.check.values import NOISY_CV, OUTLIER_SHARE

__all__ = [
    "MAX_NOTE_BYTES",
    "MAX_SLUG_CHARS",
    "NOISY_CV",
    "OUTLIER_SHARE",
    "SLUG_RE",
    "Finding",
    "Issue",
    "Report",
    "RunSummary",
    "across_runs",
    "check_note",
    "check_paths",
    "check_run",
    "date_problem",
    "format_report",
    "masked_path_problem",
    "one_line",
    "rules_raw_output",
    "rules_transaction_log",
    "run_rules",
    "single_run_issues",
]
