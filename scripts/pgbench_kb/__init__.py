"""pgbench-kb: parse, validate, derive and render PostgreSQL pgbench results.

One module per pipeline stage (see docs/architecture.md):
``parse`` (pgbench text and logs) → ``runfile``/``schema`` (the data format) → ``importer``
(raw output + metadata → run file) → ``check`` (validation) → ``derive`` (site pages and
data). ``cli`` is the only place that talks to a terminal.
"""

__version__ = "0.1.0"
