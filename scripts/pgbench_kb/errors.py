"""Domain errors of pgbench-kb.

Every expected failure is raised as a subclass of ``KbError``. The CLI (``cli/``) is the only
place that turns them into the one-line message a person sees::

    error: data/runs/2026/x.yaml:12: results.tps: expected a number, got 'fast' (write it as 123.4)

Library code never prints and never calls ``sys.exit``.
"""

from __future__ import annotations


class KbError(Exception):
    """An expected failure with a message meant for people.

    ``path``, ``line`` and ``field`` locate the problem; ``hint`` says how to fix it. ``str()``
    gives the whole one-line message without the ``error:`` prefix.
    """

    exit_status = 1

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.field = field
        self.hint = hint

    def location(self) -> str:
        """``path:line: field: `` — the parts that are known, in that order."""
        parts = []
        if self.path is not None:
            parts.append(self.path if self.line is None else f"{self.path}:{self.line}")
        if self.field is not None:
            parts.append(self.field)
        return "".join(f"{part}: " for part in parts)

    def __str__(self) -> str:
        text = f"{self.location()}{self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return " ".join(text.split("\n"))


class ParseError(KbError):
    """pgbench output or a log that cannot be read."""

    exit_status = 2


class RunFileError(KbError):
    """A run file or hardware note that is malformed or breaks the schema."""


class RunImportError(KbError):
    """``kb import`` cannot build a run file from what it was given."""


class DeriveError(KbError):
    """``kb derive`` cannot write what Hugo needs (a folder it must not touch, a bad id)."""


class ProfileError(KbError):
    """A bench profile that cannot be run."""


class CalibrationError(KbError):
    """A bench's unthrottled calibration run gave no maximum to take a rate's share of."""


class UsageError(KbError):
    """The command line itself is wrong."""

    exit_status = 2


class SearchIndexError(KbError):
    """``kb index`` cannot build or rewrite the site's search index (Pagefind)."""


class RenderError(KbError):
    """``kb render`` cannot lay out the site with Hugo."""


class WorkerLost(KbError):
    """A worker process ended before it had sent what it was doing (killed, out of memory)."""


class ImportProblems(RunImportError):
    """Every problem of one import at once, each a located ``RunImportError``. ``str()`` joins
    them; the CLI prints one ``error: …`` line per problem."""

    def __init__(self, problems: list[KbError]) -> None:
        super().__init__(f"{len(problems)} problems: " + "; ".join(str(p) for p in problems))
        self.problems = list(problems)
