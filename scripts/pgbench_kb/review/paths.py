"""Every path a pull request changes, accounted for.

Results — run files, raw outputs, hardware notes — are what a pull request is for, and the
knowledge diff says what they change. Everything else changes the site or the code that builds
it, and is listed at the top of the review as needing a maintainer's review, by kind. A few
top-level entries would steer Hugo itself (a ``config/`` folder is merged into the site's
configuration, ``themes/``, ``assets/``, ``i18n/`` and ``archetypes/`` are read as parts of the
site, a ``hugo.*`` file is a configuration Hugo looks for): those are refused outright.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from pgbench_kb.runs.check.top_level import refused_top

#: Where results live: what a contributor's pull request adds.
RESULTS = ("data/runs/", "data/raw/", "content/hardware/")
#: Top-level folders the build writes and reads back (kb check's cache is a pickle, loaded as
#: trusted): never from a pull request.
GENERATED = {
    "build": "build/ is written by the build, and its caches are loaded as trusted",
    "public": "public/ is the built site, written by make site",
}
#: (kind, test) in the order the review names them: the first that matches a path is its kind.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("workflows", (".github/",)),
    ("code", ("scripts/", "tests/", "fleet/", ".ci/")),
    ("the build", ("Makefile", "requirements.lock", "pyproject.toml", ".gitignore",
                   ".gitattributes", ".shellcheckrc")),
    ("layouts", ("layouts/",)),
    ("static files", ("static/",)),
    ("the site configuration", ("config.toml",)),
    ("answers", ("data/answers.yaml",)),
    ("claims", ("data/claims.yaml",)),
    ("guides", ("content/guides/",)),
    ("other pages", ("content/",)),
    ("other data", ("data/",)),
    ("docs", ("docs/", "README.md", "CONTRIBUTING.md")),
)  # fmt: skip
NEW_TOP = "new top-level entries"
OTHER_TOP = "other top-level entries"


@dataclass
class Accounting:
    """The changed paths by what they are: results, refused (with why) and, by kind, what
    needs a maintainer's review."""

    results: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    review: dict[str, list[str]] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "results": len(self.results),
            "refused": [{"path": shown(p), "why": w} for p, w in self.refused],
            "needs_review": {
                kind: [shown(p) for p in paths] for kind, paths in self.review.items()
            },
        }


def shown(path: str) -> str:
    """A path as text: bytes of its name that are not UTF-8 (kept by git as surrogate
    escapes) written as ``\\xff``, so the review is valid UTF-8 JSON."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _matches(path: str, tests: tuple[str, ...]) -> bool:
    return any(path.startswith(t) if t.endswith("/") else path == t for t in tests)


def refusal(path: str) -> str | None:
    """Why a path may not come from a pull request, or None."""
    top = PurePosixPath(path).parts[0] if path else ""
    return GENERATED.get(top) or refused_top(top)


def kind_of(path: str, base_top: set[str]) -> str | None:
    """The kind a changed path is reviewed as, or None for a result."""
    if _matches(path, RESULTS):
        return None
    for kind, tests in KINDS:
        if _matches(path, tests):
            return kind
    top = PurePosixPath(path).parts[0]
    return OTHER_TOP if top in base_top else NEW_TOP


def account(changed: Iterable[str], base_top: set[str]) -> Accounting:
    """Sort the changed paths (``base_top``: the top-level names of the base's tree, so a new
    one is flagged as new)."""
    out = Accounting()
    for path in sorted(changed):
        why = refusal(path)
        if why is not None:
            out.refused.append((path, why))
            continue
        kind = kind_of(path, base_top)
        if kind is None:
            out.results.append(path)
        else:
            out.review.setdefault(kind, []).append(path)
    order = [kind for kind, _tests in KINDS] + [NEW_TOP, OTHER_TOP]
    out.review = {kind: out.review[kind] for kind in order if kind in out.review}
    return out
