"""Pull requests, round two (issue #33): the attacks on the one list of files and on the input
readers, each refused with a located error by the real `kb check` on a whole project root (and,
where the site build reads the same files, by `kb derive`).

Each test builds a tiny project root (tests/check/root plus the good run) with the attack in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkkit import good_run, write
from kbtest import run_kb
from pgbench_kb.analyze.load import load_runs
from pgbench_kb.derive.handwritten import check_pages
from pgbench_kb.errors import DeriveError
from pgbench_kb.parse.textlines import MAX_LINE_CHARS, first_long_line, number_tokens
from pgbench_kb.review.diff import _runs_of
from pgbench_kb.runs.check import check_paths
from pgbench_kb.runs.files import content_pages, note_files, run_files
from pgbench_kb.runs.runfile import sha256_bytes

FORGED = "id: forged\nresults:\n  tps: 98765\nbenchmark:\n  scale: -5\n"


def errors_of(root: Path, *paths: str) -> list[str]:
    """Every error of `kb check` on ``paths`` (default: the whole root), relative to it."""
    report = check_paths(list(paths), root=root)
    return [str(f).replace(str(root) + "/", "") for f in report.errors]


def dot_error(relative: str, *, folder: bool = False) -> str:
    name = relative.rsplit("/", 1)[-1]
    kind = "a folder" if folder else "a file"
    return (
        f"{relative}: file name: {name!r} is {kind} whose name starts with a dot: hidden names "
        "are skipped by some tools and read by others, so none is allowed under content/ or "
        "data/; rename it without the leading dot"
    )


def plant(root: Path, relative: str, text: str = FORGED) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# 1. one list of files ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "shown", "folder"),
    [
        ("data/runs/2026/11/.forged.yaml", "data/runs/2026/11/.forged.yaml", False),
        ("data/runs/.forged.yml", "data/runs/.forged.yml", False),
        ("data/runs/.hidden/forged.yaml", "data/runs/.hidden", True),
        ("data/runs/2026/.x/11/forged.yaml", "data/runs/2026/.x", True),
        ("data/raw/2026/11/.forged.txt", "data/raw/2026/11/.forged.txt", False),
        ("data/.answers.yaml", "data/.answers.yaml", False),
        ("content/hardware/.x.md", "content/hardware/.x.md", False),
        ("content/guides/.draft.md", "content/guides/.draft.md", False),
        ("content/.hidden/guides/x.md", "content/.hidden", True),
    ],
)
def test_a_dot_named_file_is_refused_and_never_read(
    contributed: Path, relative: str, shown: str, folder: bool
) -> None:
    """Regression (#33, attack 1): `data/runs/…/.ID.yaml` was skipped by kb check but read by
    derive, analyze and diff (rglob("*.yaml")), publishing "scale −5, 98,765 tps"; a hidden
    hardware note was refused by derive and missed by check."""
    plant(contributed, relative)
    assert errors_of(contributed) == [dot_error(shown, folder=folder)]
    with pytest.raises(DeriveError) as raised:
        check_pages(contributed)
    assert "rename it without the leading dot" in str(raised.value)
    # No stage lists it, so none reads it even where the refusal was skipped.
    listed = [*run_files(contributed), *note_files(contributed), *content_pages(contributed)]
    assert [p.name for p in listed if p.name.startswith(".") or ".hidden" in p.parts] == []
    assert [r.id for r in load_runs(contributed)] == ["measured-tpcb"]
    assert list(_runs_of(contributed)) == ["measured-tpcb"]


def test_a_dot_named_file_named_on_the_command_line_is_refused(contributed: Path) -> None:
    """`kb check data/runs/.x.yaml` and `kb check data/runs` refuse it too."""
    plant(contributed, "data/runs/.forged.yaml")
    assert errors_of(contributed, str(contributed / "data/runs/.forged.yaml")) == [
        dot_error("data/runs/.forged.yaml")
    ]
    assert errors_of(contributed, str(contributed / "data/runs")) == [
        dot_error("data/runs/.forged.yaml")
    ]


def test_an_interrupted_imports_temporary_file_stays_a_stray_file(contributed: Path) -> None:
    """kb import's own temporary file (`.NAME.XXXX.tmp`, runfile.write_new) left by a killed
    import is reported as a stray file to remove, not read, and does not stop a build."""
    plant(contributed, "data/runs/.measured-tpcb2.yaml.k3j4.tmp")
    assert errors_of(contributed) == [
        "data/runs/.measured-tpcb2.yaml.k3j4.tmp: (file): a temporary file left by an "
        "interrupted kb import (nothing refers to it): remove it"
    ]
    check_pages(contributed)
    assert [r.id for r in load_runs(contributed)] == ["measured-tpcb"]


def test_the_fixture_root_is_clean(contributed: Path) -> None:
    assert errors_of(contributed) == []
    assert [p.name for p in run_files(contributed)] == ["measured-tpcb.yaml"]
    assert good_run()["id"] == "measured-tpcb"
    write(contributed, good_run())


# 2. number tokenizing linear in the line's length, lines bounded -----------------------------


def hostile_raw_run(root: Path, line: str) -> dict:
    """The good run with ``line`` put into its raw output after the first line."""
    run = good_run()
    raw = root / run["raw"][0]["path"]
    data = raw.read_bytes().replace(b"\n", b"\n" + line.encode() + b"\n", 1)
    raw.write_bytes(data)
    run["raw"][0]["sha256"] = sha256_bytes(data)
    write(root, run)
    return run


@pytest.mark.parametrize(
    "line",
    [
        "progress: " + "1e," * (2**20 // 3) + "x",
        "progress: 1.0 s," + " " * 2**20 + "x",
        "tps = " * (2**20 // 6),
    ],
    ids=["1e-comma", "spaces", "labels"],
)
def test_a_megabyte_hostile_line_in_raw_output_is_refused(contributed: Path, line: str) -> None:
    """Regression (#33, attack 6): a `progress:` line of repeated `1e,` ending in `x` made the
    number tokenizer backtrack (60 KiB: 13 s in kb check; 1 MiB about an hour). The real
    `kb check` refuses a 1 MiB line, located; the timeout is only a guard against a hang (the
    time target, under a second, is tests/perf/bench_hostile.py's)."""
    run = hostile_raw_run(contributed, line)
    done = run_kb("check", "--root", str(contributed))
    assert done.returncode == 1, done.stderr
    raw_line = line_of(contributed, "raw")
    assert done.stdout.replace(str(contributed) + "/", "").splitlines()[0] == (
        f"data/runs/measured-tpcb.yaml:{raw_line}: raw.0: the raw output cannot be parsed: "
        f"line 2 is {len(line):,} characters long, longer than any line pgbench prints (at "
        "most 64 KiB are read)"
    )
    assert run["raw"][0]["path"].startswith("data/raw/")


def test_a_hostile_line_within_the_bound_is_read_in_linear_time() -> None:
    """The tokenizer on the longest line read (64 KiB of `1e,`), as it was at 60 KiB in 13 s:
    it finds no number, quickly (the figure is the benchmark's; this guards the result)."""
    line = "progress: " + "1e," * ((MAX_LINE_CHARS - 20) // 3) + "x"
    assert first_long_line(line) is None
    assert list(number_tokens(line)) == []
    assert list(number_tokens("1e,5 -3 x1 2.5x 1,000 +7")) == ["1e,5", "-3", "1,000", "+7"]


def line_of(root: Path, key: str) -> int:
    lines = (root / "data/runs/measured-tpcb.yaml").read_text().split("\n")
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"{key}:")) + 1


# 4. Markdown checked on a real CommonMark parse ----------------------------------------------

GUIDE = "---\ntitle: A guide\ndescription: How to read it.\n---\n"
EVIL = "https://evil.example/pixel.png"


@pytest.mark.parametrize(
    ("body", "line"),
    [
        # The six syntaxes that got through the regexes, and variations.
        (f"![a](<{EVIL}>)", 5),
        (f"> A quote\n![a]({EVIL})", 6),
        (f"- an item\n![a]({EVIL})", 6),
        (f"![a][x]\n\n> [x]: {EVIL}", 5),
        (f"![a][x]\n\n- [x]: <{EVIL}>", 5),
        (f"[x]:\n{EVIL}\n\n![x]", 8),
        (f"![a](\n{EVIL})", 5),
        (f"![a\nb]({EVIL})", 5),
        ('![a](https\\://evil.example/p.png "t")', 5),
        ("![a](https&#58;//evil.example/p.png)", 5),
        ("![a](&#x2F;&#x2F;evil.example/p.png)", 5),
        ("![a](\\\\\\\\evil.example/p.png)", 5),
        ("![a](/\\evil.example/p.png)", 5),
        ("![a](<ht\ttps://evil.example/p.png>)", 5),
        ("![a](HTTPS://EVIL.EXAMPLE/P.PNG)", 5),
        ("![a](%68ttps://evil.example/p.png)", 5),
        ("![a](data:image/svg+xml;base64,PHN2Zz4=)", 5),
        (f"[![a]({EVIL})](/guides/)", 5),
        (f"![![b]({EVIL})](/x.png)", 5),
        (f"Text.\n\n| a |\n|---|\n| ![a]({EVIL}) |", 9),
        (f"[^1]: ![a]({EVIL})\n\nSee[^1].", 5),
        (f"Text[^1].\n\n[^1]: A note.\n\n    ![a]({EVIL})", 9),
        (f"Term\n: A definition.\n\n    ![a]({EVIL})", 8),
    ],
)
def test_an_outside_image_in_any_commonmark_syntax_is_refused(
    contributed: Path, body: str, line: int
) -> None:
    """Regression (#33, attack 9): six Markdown image syntaxes (a destination in <…>, a lazy
    continuation line, a definition inside a quote…) passed check and derive; only the
    browser's CSP stopped the request. The body is now read by a CommonMark parser."""
    plant(contributed, "content/guides/g.md", GUIDE + body + "\n")
    found = errors_of(contributed)
    assert len(found) == 1, found
    assert found[0].startswith(f"content/guides/g.md:{line}: (body): image '"), found
    assert "comes from outside the site" in found[0]
    with pytest.raises(DeriveError, match="comes from outside the site"):
        check_pages(contributed)


@pytest.mark.parametrize(
    ("body", "line", "tag"),
    [
        ("<iframe src=https://evil.example></iframe>", 5, "<iframe src=https://evil.example>"),
        ("> <script src=https://evil.example/x.js></script>", 5, "<script"),
        ("Text <img src=https://evil.example/p.png> here", 5, "<img src="),
        ("- a\n  <svg onload=alert(1)>", 6, "<svg onload=alert(1)>"),
        ("<!--\n![a](https://evil.example/p.png)\n-->", 5, "<!--"),
    ],
)
def test_raw_html_in_any_place_is_refused(contributed: Path, body: str, line: int, tag: str):
    plant(contributed, "content/guides/g.md", GUIDE + body + "\n")
    found = errors_of(contributed)
    assert found and found[0].startswith(f"content/guides/g.md:{line}: (body): raw HTML"), found
    assert tag in found[0]


def test_links_to_other_sites_and_local_images_stay_allowed(contributed: Path) -> None:
    body = (
        "A [link](https://www.postgresql.org/) and <https://www.postgresql.org/docs/>, an "
        "image ![chart](/charts/a.svg) and ![r](../x.png), a [ref][pg].\n\n"
        "[pg]: https://www.postgresql.org/\n\n"
        "```\n![x](https://example.org/x.png)\n```\n\n"
        "    ![shown as code](https://example.org/x.png)\n\n"
        "`![x](https://example.org/x.png)` and latency < 5 ms.\n"
    )
    plant(contributed, "content/guides/g.md", GUIDE + body)
    assert errors_of(contributed) == []


# 5. control, bidi and zero-width characters; the maintainers' name ---------------------------


@pytest.mark.parametrize(
    ("field", "value", "shown"),
    [
        ("provenance.contributor", "mallory\r\n---\n@everyone [x](https://e.example)", "U+000D"),
        ("provenance.contributor", "alice\u202eevil", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("provenance.contributor", "al\u200bice", "U+200B ZERO WIDTH SPACE"),
        ("provenance.contributor", "\ufeffalice", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("provenance.contributor", "alice\u2066x\u2069", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("provenance.contributor", "alice\x85", "U+0085"),
        ("provenance.contributor", "alice\x1b[31m", "U+001B"),
        ("provenance.notes", "two lines\nand a tab\there", "U+0009"),
        ("provenance.notes", "a line\u2028separator", "U+2028 LINE SEPARATOR"),
        ("postgres.settings_profile", "tuned\nline", "U+000A"),
        ("server.os.name", "Linux\u200f", "U+200F RIGHT-TO-LEFT MARK"),
    ],
)
def test_control_bidi_and_zero_width_characters_are_refused(
    contributed: Path, field: str, value: str, shown: str
) -> None:
    """Regression (#33, attack 10): a `contributor` with carriage returns injected a rule, an
    @mention, a link and a right-to-left override into the pull-request comment."""
    run = good_run()
    node = run
    *parents, last = field.split(".")
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value
    write(contributed, run)
    found = [e for e in errors_of(contributed) if f": {field}: " in e]
    assert len(found) == 1, errors_of(contributed)
    assert found[0].startswith("data/runs/measured-tpcb.yaml:")
    assert f"{field}: {shown} is not allowed in a run file's text" in found[0]


def test_line_breaks_stay_allowed_in_notes_and_a_scripts_text(contributed: Path) -> None:
    from pgbench_kb.runs.check.text import rules_text

    run = good_run()
    run["provenance"]["notes"] = "First line.\nSecond line."
    run["benchmark"]["workload"]["scripts"] = [{"text": "\\set aid 1\n\tSELECT 1;\n"}]
    assert rules_text(run) == []
    assert [i.field for i in rules_text({"postgres": {"settings": {"work\u200bmem": "4MB"}}})] == [
        "postgres.settings.work\u200bmem"
    ]


def test_kb_import_refuses_a_bidi_override_in_the_contributor(tmp_path: Path) -> None:
    """kb import applies the same rule before it writes anything."""
    notes = tmp_path / "content" / "hardware"
    notes.mkdir(parents=True)
    (notes / "box.md").write_text(
        "---\nschema_version: 1\ntitle: Box\ndescription: A box.\nroles: [server]\n---\nA box.\n"
    )
    output = Path(__file__).parents[1] / "parse" / "fixtures" / "pg18-tpcb-P1-r.txt"
    done = run_kb(
        "import", "--root", str(tmp_path), str(output), "--machine", "box",
        "--set", "provenance.recorded_at=2026-11-20T10:00:00Z", "--set", "postgres.version=18.1",
        "--set", "postgres.settings={}", "--set", "storage.data.filesystem=ext4",
        "--set", "provenance.contributor=alice\u202etxt.exe",
    )  # fmt: skip
    assert done.returncode != 0
    assert "provenance.contributor" in done.stderr
    assert "U+202E RIGHT-TO-LEFT OVERRIDE is not allowed" in done.stderr
    assert not (tmp_path / "data" / "runs").exists() or not run_files(tmp_path)


@pytest.mark.parametrize(
    "contributor",
    ["pgbench-kb maintainers", "PGBench-KB  Maintainers", "pgbench kb maintainers (bob)"],
)
def test_the_maintainers_name_is_kept_for_the_projects_own_runs(
    contributed: Path, contributor: str
) -> None:
    """Regression (#33, attack 10): any pull request could sign as "pgbench-kb maintainers"."""
    run = good_run()
    run["provenance"]["contributor"] = contributor
    write(contributed, run)
    assert errors_of(contributed) == [
        f"data/runs/measured-tpcb.yaml:{line_of(contributed, 'provenance')}: "
        f"provenance.contributor: {contributor!r}: the name 'pgbench-kb maintainers' is kept "
        "for the project's own runs (listed with their sha256 in "
        "data/maintainers-runs.sha256); sign the run with your own name"
    ]


def test_a_listed_run_may_sign_as_the_maintainers_until_it_is_edited(contributed: Path) -> None:
    """The list holds each own run's sha256: a pull request editing a listed run file (or
    putting another file at its path) is refused; editing the list is a change the review
    flags for a maintainer."""
    run = good_run()
    run["provenance"]["contributor"] = "pgbench-kb maintainers"
    path = write(contributed, run)
    digest = sha256_bytes(path.read_bytes())
    listed = contributed / "data" / "maintainers-runs.sha256"
    listed.write_text(f"{digest}  data/runs/measured-tpcb.yaml\n")
    assert errors_of(contributed) == []
    path.write_text(path.read_text() + "# edited after it was listed\n")
    assert [e.split(": ")[1] for e in errors_of(contributed) if "maintainers" in e] == [
        "provenance.contributor"
    ]


def test_the_projects_own_runs_are_all_listed() -> None:
    """Every run of the repository that signs as the maintainers is in the list, as it is."""
    repo = Path(__file__).resolve().parents[2]
    from pgbench_kb.runs.check.text import claims_maintainers, own_runs
    from pgbench_kb.runs.runfile import read_run

    listed = own_runs(repo)
    for path in run_files(repo):
        contributor = read_run(path).data["provenance"]["contributor"]
        if claims_maintainers(contributor):
            relative = path.relative_to(repo).as_posix()
            assert listed.get(relative) == sha256_bytes(path.read_bytes()), relative


def test_a_file_in_a_dot_named_folder_named_on_the_command_line_is_refused(
    contributed: Path,
) -> None:
    plant(contributed, "data/runs/.hidden/forged.yaml")
    assert errors_of(contributed, str(contributed / "data/runs/.hidden/forged.yaml")) == [
        "data/runs/.hidden/forged.yaml: file name: '.hidden' is a folder whose name starts with "
        "a dot: hidden names are skipped by some tools and read by others, so none is allowed "
        "under content/ or data/; rename it without the leading dot"
    ]


def test_a_body_longer_than_what_is_read_is_refused_unread(contributed: Path) -> None:
    """markdown-it-py spends up to 30 µs a character on hostile Markdown (`![` repeated: 29 s
    for 1 MiB): a body over 64 Ki characters is refused before it is parsed."""
    body = "![" * (65 * 1024)
    plant(contributed, "content/guides/g.md", GUIDE + body + "\n")
    assert errors_of(contributed) == [
        f"content/guides/g.md:5: (body): the body is {len(body) + 1:,} characters long; a "
        "page's Markdown is read up to 64 Ki characters (a page is prose; link to long "
        "material instead)"
    ]
    with pytest.raises(DeriveError, match="characters long"):
        check_pages(contributed)
