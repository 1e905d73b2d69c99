"""Every path a pull request changes is accounted for (issue #33, item 2): refused, needing a
maintainer's review by kind, or a result. Pure sorting of path names: no repository needed."""

from __future__ import annotations

import pytest

from pgbench_kb.review.paths import account

BASE_TOP = {"config.toml", "content", "data", "layouts", "static", "scripts", "docs", "fleet",
            "Makefile", "README.md", ".shellcheckrc", "LICENSE"}  # fmt: skip


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("data/runs/2026/11/x.yaml", None),
        ("data/raw/2026/11/x.txt", None),
        ("content/hardware/box.md", None),
        (".github/workflows/check.yml", "workflows"),
        (".github/pull_request_template.md", "workflows"),
        ("scripts/bench.sh", "code"),
        ("tests/conftest.py", "code"),
        ("Makefile", "the build"),
        ("requirements.lock", "the build"),
        ("pyproject.toml", "the build"),
        ("layouts/baseof.html", "layouts"),
        ("static/js/x.js", "static files"),
        ("static/img/x.svg", "static files"),
        ("config.toml", "the site configuration"),
        ("data/answers.yaml", "answers"),
        ("data/claims.yaml", "claims"),
        ("content/guides/x.md", "guides"),
        ("content/_index.md", "other pages"),
        ("data/other.yaml", "other data"),
        ("docs/site.md", "docs"),
        ("README.md", "docs"),
        ("LICENSE", "other top-level entries"),
        ("newtop/readme.txt", "new top-level entries"),
        ("evil.sh", "new top-level entries"),
    ],
)
def test_each_path_has_its_kind(path: str, kind: str | None):
    found = account([path], BASE_TOP)
    assert not found.refused
    if kind is None:
        assert found.results == [path] and found.review == {}
    else:
        assert found.review == {kind: [path]} and found.results == []


@pytest.mark.parametrize(
    "path",
    ["config/_default/module.toml", "themes/x/layouts/a.html", "assets/x.css", "i18n/en.toml",
     "archetypes/default.md", "hugo.toml", "hugo.yaml", "hugo.json", "build/cache/check.pickle",
     "public/index.html"],
)  # fmt: skip
def test_what_would_steer_hugo_or_the_build_is_refused(path: str):
    """Regression (#33, attack 3): a config/_default/ folder was merged by Hugo; build/'s
    caches are loaded as trusted pickles."""
    found = account([path], BASE_TOP)
    ((refused, why),) = found.refused
    assert refused == path and why and found.review == {} and found.results == []


def test_kinds_come_in_a_fixed_order():
    found = account(["static/a", "scripts/a", ".github/a", "zz/a", "data/answers.yaml"], BASE_TOP)
    assert list(found.review) == [
        "workflows", "code", "static files", "answers", "new top-level entries",
    ]  # fmt: skip
