"""Pull requests that try to hijack, deceive or exhaust the site (issue #22): each attack found
by replaying a hostile contribution is refused by `kb check` with a located error naming the
file (or, for the site build, by `kb derive`: tests/site/test_site_attacks.py).

Each test builds a tiny project root (the test box's note and raw output, tests/check/root)
with the attack in it and runs the real `kb check` on the whole root, as `make check` does."""

from __future__ import annotations

import copy
import gzip
import os
import resource
import shutil
import time
from pathlib import Path

import pytest

from checkkit import good_run, write
from pgbench_kb.derive.handwritten import check_pages
from pgbench_kb.errors import DeriveError
from pgbench_kb.runs.check import check_paths, format_report
from pgbench_kb.runs.runfile import MAX_LOG_BYTES, MAX_RAW_OUTPUT_BYTES, sha256_bytes

GUIDE = "---\ntitle: A guide\ndescription: How to read it.\n---\nSome prose.\n"


def errors_of(root: Path) -> list[str]:
    """Every error of `kb check` on the whole of ``root``, paths relative to it."""
    report = check_paths([], root=root)
    return [str(f).replace(str(root) + "/", "") for f in report.errors]


def page(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_fixture_root_is_clean(contributed: Path) -> None:
    """The attacks below are the only errors: the root they are added to has none."""
    page(contributed, "content/guides/ok.md", GUIDE + "![a chart](/charts/x.svg) and `{.x}`\n")
    assert errors_of(contributed) == []


# 1. hand-written files where the converter writes pages -------------------------------------


@pytest.mark.parametrize(
    "relative",
    [
        "content/runs/measured-tpcb.md",
        "content/groups/some-group.md",
        "content/results/_index.md",
        "content/comparisons/_index.md",
        "content/sources/x.md",
        "content/answers/x.md",
        "content/downloads/_index.md",
        "content/changes/_index.md",
        "content/runs.md",
    ],
)
def test_a_shadow_of_a_generated_page_is_refused(contributed: Path, relative: str) -> None:
    """Regression: content/runs/<someone's id>.md replaced that run's page (cold and warm);
    content/results/_index.md or content/comparisons/_index.md with `cascade: {build: …}`
    replaced the explorer or removed every comparison page."""
    page(
        contributed,
        relative,
        "---\ntitle: Mine now\ncascade:\n  build:\n    render: never\n---\nx\n",
    )
    section = relative.split("/")[1].removesuffix(".md")
    assert errors_of(contributed) == [
        f"{relative}:1: (file): kb derive writes the pages under /{section}/: a hand-written "
        "file here would replace them (hand-written pages are content/_index.md (home), "
        "content/search.md, content/guides/SLUG.md, content/hardware/SLUG.md and the _index.md "
        "of those two folders)"
    ]
    with pytest.raises(DeriveError, match=f"^{relative}:1: \\(file\\): kb derive writes"):
        check_pages(contributed)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("url", "/runs/measured-tpcb/"),
        ("url", "/"),
        ("aliases", "[/runs/measured-tpcb/]"),
        ("cascade", "{build: {list: never}}"),
        ("build", "{render: never}"),
        ("outputs", "[json]"),
        ("layout", "search"),
    ],
)
def test_a_guide_cannot_take_over_another_address(contributed: Path, key: str, value: str) -> None:
    """Regression: a guide with `url: /runs/<id>/` replaced a run page (and the render cache
    kept it after the guide was removed); `url: /` replaced the home page."""
    page(contributed, "content/guides/g.md", f"---\ntitle: A guide\n{key}: {value}\n---\nText.\n")
    assert errors_of(contributed) == [
        f"content/guides/g.md:3: {key}: changes where a page is published or what other pages "
        "do; a guide page may have description, draft, title, weight"
    ]
    with pytest.raises(DeriveError, match=f"^content/guides/g.md:3: {key}: changes where"):
        check_pages(contributed)


def test_a_note_cannot_redirect_other_addresses(contributed: Path) -> None:
    """Regression: a hardware note's `aliases:` turned another machine's page and a guide
    into redirects."""
    note = contributed / "content/hardware/test-box.md"
    note.write_text(
        note.read_text().replace("roles:", "aliases: [/hardware/other/, /guides/g/]\nroles:")
    )
    assert errors_of(contributed) == [
        "content/hardware/test-box.md:5: aliases: a note may not publish itself at other "
        "addresses (they could be another machine's or a guide's): remove aliases"
    ]
    with pytest.raises(DeriveError, match=r"test-box.md: aliases: changes where"):
        check_pages(contributed)


@pytest.mark.parametrize("relative", ["content/guides/index.md", "content/guides/page.md"])
def test_a_page_named_as_hugo_names_bundles_is_refused(contributed: Path, relative: str) -> None:
    """Regression: content/hardware/index.md hid every hardware page (a leaf bundle)."""
    page(contributed, relative, GUIDE)
    assert errors_of(contributed) == [
        f"{relative}:1: (file): '{Path(relative).name}' is a name Hugo gives a meaning (a bundle "
        "or a list page): it would hide the pages beside it (hand-written pages are "
        "content/_index.md (home), content/search.md, content/guides/SLUG.md, "
        "content/hardware/SLUG.md and the _index.md of those two folders)"
    ]


def test_a_note_named_index_is_refused(contributed: Path) -> None:
    """Regression: content/hardware/index.md hid every hardware page (a leaf bundle)."""
    page(contributed, "content/hardware/index.md", GUIDE)
    assert errors_of(contributed)[0] == (
        "content/hardware/index.md:1: (file): 'index.md': Hugo gives this name a meaning (a "
        "bundle or a list page): it would hide the other notes; name the note after the machine"
    )
    with pytest.raises(DeriveError, match=r"^content/hardware/index\.md:1: \(file\): 'index"):
        check_pages(contributed)


@pytest.mark.parametrize(
    ("relative", "message"),
    [
        ("content/other/x.md", "not a place for a hand-written page"),
        ("content/guides/sub/x.md", "not a place for a hand-written page"),
        ("content/guides/picture.svg", "only Markdown pages (.md) are contributed"),
        ("data/extra.yaml", "not a place for a contributed file (data/ holds"),
        ("data/runs/notes.txt", "data/runs/ holds run files (.yaml) only"),
    ],
)
def test_files_outside_their_places_are_refused(
    contributed: Path, relative: str, message: str
) -> None:
    page(contributed, relative, GUIDE)
    assert [e for e in errors_of(contributed) if message in e] == [
        e for e in errors_of(contributed) if e.startswith(f"{relative}:1: (file): ")
    ]
    assert len(errors_of(contributed)) == 1


# 2. what a page's body and front matter may hold --------------------------------------------


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ('{{< youtube id="dQw4w9WgXcQ" >}}', 5, "shortcode 'youtube' is not allowed"),
        ('{{< figure src="https://evil.example/x.png" >}}', 5, "shortcode 'figure' is not"),
        ("```\n{{< youtube x >}}\n```", 6, "shortcode 'youtube' is not allowed"),
        ("{{%\n  x\n%}}", 5, "shortcode '(no name on this line)' is not allowed"),
        ("![x](https://evil.example/pixel.png)", 5, "image 'https://evil.example/pixel.png'"),
        ("![x](//evil.example/pixel.png)", 5, "image '//evil.example/pixel.png' comes from"),
        ("![x](data:image/png;base64,AAAA)", 5, "comes from outside the site"),
        ("![x][px]\n\n[px]: https://evil.example/p.png", 5, "comes from outside the site"),
        ('## Title {style="position:fixed;inset:0"}', 5, "Markdown attributes ({…} at the end"),
        ("Para.\n{.overlay}", 6, "Markdown attributes"),
        ("<iframe src=https://evil.example></iframe>", 5, "raw HTML '<iframe"),
    ],
)
def test_outside_content_and_restyling_in_a_body_are_refused(
    contributed: Path, body: str, line: int, message: str
) -> None:
    """Regression: Hugo shortcodes (`youtube`, `figure` with an outside `src`), Markdown
    images from other hosts and heading attributes (`{style=…}`) were published: outside
    requests, a full-page overlay."""
    page(contributed, "content/guides/g.md", GUIDE.replace("Some prose.\n", body + "\n"))
    found = errors_of(contributed)
    assert found and all(e.startswith("content/guides/g.md:") for e in found), found
    assert found[0].startswith(f"content/guides/g.md:{line}: (body): ")
    assert message in found[0]
    with pytest.raises(DeriveError, match=f"^content/guides/g.md:{line}: \\(body\\): "):
        check_pages(contributed)


def test_a_body_may_show_shortcodes_and_braces_as_text(contributed: Path) -> None:
    body = (
        "Write `{{</* youtube x */>}}` or {{</* figure */>}}; a set `{x=1}`; a [link]"
        "(https://www.postgresql.org/) and an image ![chart](/charts/a.svg).\n"
        "```\n## Title {style=x}\n![x](https://example.org/x.png)\n```\n"
    )
    page(contributed, "content/guides/g.md", GUIDE + body)
    assert errors_of(contributed) == []


def test_yaml_aliases_in_front_matter_are_refused_quickly(contributed: Path) -> None:
    """Regression: YAML aliases nested nine deep in a guide's front matter took 110 s and
    2.2 GB in `kb derive` (python-frontmatter expands them)."""
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for n in range(1, 10):
        levels.append(f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 9)}]")
    front = "\n".join(["title: Boom", *levels])
    page(contributed, "content/guides/boom.md", f"---\n{front}\n---\nText.\n")
    started = time.monotonic()
    assert errors_of(contributed) == [
        "content/guides/boom.md:4: a1.0: YAML aliases (*name) are not allowed in front matter "
        "(write the value out in full)"
    ]
    with pytest.raises(DeriveError, match=r"^content/guides/boom.md:4: a1\.0: YAML aliases"):
        check_pages(contributed)
    assert time.monotonic() - started < 5


# 3. links, paths and sizes ------------------------------------------------------------------


def test_a_committed_symlink_is_refused_without_reading_it(
    contributed: Path, tmp_path: Path
) -> None:
    """Regression: committed symlinks were followed: `kb check` read files outside the
    repository and repeated their keys and values in its messages (a public CI log)."""
    secret = tmp_path / "secret.md"
    secret.write_text("---\nsecret_key: hunter2\n---\nx\n")
    (contributed / "content/hardware/leak.md").symlink_to(secret)
    (contributed / "content/guides").mkdir(parents=True)
    (contributed / "content/guides/leak.md").symlink_to(secret)
    (contributed / "data/runs/outside").symlink_to(tmp_path, target_is_directory=True)
    found = errors_of(contributed)
    assert sorted(found) == [
        f"content/guides/leak.md:1: (file): a symbolic link (to {secret}): commit the file "
        "itself (links are not followed)",
        f"content/hardware/leak.md:1: (file): a symbolic link (to {secret}): commit the file "
        "itself (links are not followed)",
        f"data/runs/outside:1: (file): a symbolic link (to {tmp_path}): commit the file itself "
        "(links are not followed)",
    ]
    assert "hunter2" not in format_report(check_paths([], root=contributed))
    assert "secret_key" not in format_report(check_paths([], root=contributed))


def test_a_raw_path_leaving_the_repository_is_refused_unread(contributed: Path) -> None:
    """Regression: a raw path with `..` pointing at /dev/zero was read by `kb derive` without
    bound (2.7 GB, then MemoryError)."""
    run = good_run()
    depth = len(contributed.parts)
    run["raw"][0]["path"] = "data/raw/" + "../" * depth + "dev/zero"
    write(contributed, run)
    found = errors_of(contributed)
    assert found[0].startswith("data/runs/measured-tpcb.yaml:")
    assert "raw.0.path: 'data/raw/../" in found[0]
    assert "is not a path inside data/raw/ (no '..', no leading '/')" in found[0]


def test_raw_output_with_junk_appended_is_refused(contributed: Path) -> None:
    """Regression: 30 MiB of junk appended to a raw output was published as a 31 MB page."""
    run = good_run()
    raw = contributed / run["raw"][0]["path"]
    data = raw.read_bytes() + b"junk " * (30 * 2**20 // 5)
    raw.write_bytes(data)
    run["raw"][0]["sha256"] = sha256_bytes(data)
    write(contributed, run)
    assert MAX_RAW_OUTPUT_BYTES == 8 * 2**20
    assert errors_of(contributed) == [
        f"data/runs/measured-tpcb.yaml:{line_of(contributed, 'raw')}: raw.0.path: "
        f"{run['raw'][0]['path']}: file is 30.0 MiB; the limit is 8 MiB (pgbench's output as "
        "it printed it, nothing appended; a day of -P 1 progress lines is about 6 MB)"
    ]


def line_of(root: Path, key: str) -> int:
    lines = (root / "data/runs/measured-tpcb.yaml").read_text().split("\n")
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"{key}:")) + 1


def _log_run(contributed: Path, logs: list[bytes]) -> dict:
    run = good_run()
    for index, blob in enumerate(logs):
        path = f"data/raw/2026/11/measured-tpcb.log{index}.gz"
        (contributed / path).write_bytes(blob)
        run["raw"].append({"path": path, "sha256": sha256_bytes(blob), "kind": "transaction_log"})
    return run


def zero_bomb(path: Path, packed: int = 1_700_000) -> bytes:
    """A gzip file of about ``packed`` bytes that unpacks to about a thousand times more: one
    gzip member of 1 MiB of zeros written again and again (a gzip file may hold many members,
    and `kb check` unpacks every one), so that making it costs nothing."""
    member = gzip.compress(bytes(2**20), compresslevel=9)
    with open(path, "wb") as out:
        for _ in range(packed // len(member) + 1):
            out.write(member)
    return path.read_bytes()


def test_gzip_logs_that_unpack_to_gigabytes_are_refused_in_bounded_memory(
    contributed: Path, tmp_path: Path
) -> None:
    """Regression: two 1.7 MB gzip transaction logs took `kb check` 40 s and 2.4 GB (all logs
    of a run were unpacked at once, in memory). Now each is unpacked in parts into a scratch
    file and refused beyond 50 times its size."""
    bomb = zero_bomb(tmp_path / "bomb.gz")
    write(contributed, _log_run(contributed, [bomb, bomb]))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    found = errors_of(contributed)
    refusal = (
        "the transaction log is refused: unpacks to more than 50 times its size (the limit "
        "for a gzip raw file; pgbench's logs pack about 4 to 1) (keep the log as pgbench wrote "
        "it, gzipped)"
    )
    assert found == [
        f"data/runs/measured-tpcb.yaml:{line_of(contributed, 'raw') + 3 * i}: raw.{i}: {refusal}"
        for i in (1, 2)
    ]
    assert time.monotonic() - started < 10
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024, f"kb check grew by {grown_kib} KiB"


def test_logs_within_the_ratio_are_bounded_together(contributed: Path, monkeypatch) -> None:
    """The run's logs together are bounded too (MAX_LOG_BYTES, here lowered to 1 MiB to keep
    the test small): the second log that crosses it is refused, naming the limit."""
    import pgbench_kb.runs.runfile as runfile

    monkeypatch.setattr(runfile.GzipBudget.__init__, "__defaults__", (2**20,))
    rows = os.urandom(700_000).hex().encode()  # packs about 2 to 1: under the ratio cap
    logs = [gzip.compress(rows), gzip.compress(rows)]
    write(contributed, _log_run(contributed, logs))
    found = [e for e in errors_of(contributed) if "transaction log" in e]
    assert found and "unpack to more than 1 MiB together (the limit)" in found[0], found
    assert MAX_LOG_BYTES == 512 * 2**20


# 4. ids, groups and figures -----------------------------------------------------------------


def _note(contributed: Path, slug: str) -> None:
    source = (contributed / "content/hardware/test-box.md").read_text()
    (contributed / f"content/hardware/{slug}.md").write_text(source)


def test_run_ids_differing_only_in_case_are_refused(contributed: Path) -> None:
    """Regression: run ids differing only in case collided (Hugo lowercases addresses): the
    first run's page was gone."""
    _note(contributed, "talk-17devel-unspecified")
    run = good_run("transcribed-figures")
    write(contributed, run)
    other = copy.deepcopy(run)
    other["id"] = "Transcribed-Figures"
    other["results"]["tps"] = 410
    write(contributed, other)
    found = errors_of(contributed)
    assert any(
        e.startswith(
            "data/runs/transcribed-figures.yaml:4: id: 'transcribed-figures' differs only in case"
        )
        or e.startswith(
            "data/runs/Transcribed-Figures.yaml:4: id: 'Transcribed-Figures' differs only in case"
        )
        for e in found
    ), found


@pytest.mark.parametrize("run_id", ["index", "page", "INDEX"])
def test_a_run_id_hugo_gives_a_meaning_is_refused(contributed: Path, run_id: str) -> None:
    """Regression: a run id `index` passed check and failed the build with a misleading
    message."""
    run = good_run()
    run["id"] = run_id
    write(contributed, run)
    assert (
        f"data/runs/{run_id}.yaml:4: id: '{run_id}' is a name Hugo gives a meaning (a bundle or "
        "a list page): its page would hide the others; choose another"
    ) in errors_of(contributed)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "scale",
            10**39,
            "benchmark.scale: 1" + "0" * 39 + " is beyond the limit of 1,000,000",
        ),
        ("clients", 300_000, "benchmark.clients: 300000 is beyond the limit of 262,143"),
    ],
)
def test_implausible_figures_are_refused_naming_the_field(
    contributed: Path, field: str, value: int, message: str
) -> None:
    """Regression: a `benchmark.scale` of 10³⁹ was published."""
    run = good_run()
    run["benchmark"][field] = value
    run["provenance"]["declared"] = sorted({*run["provenance"]["declared"], f"benchmark.{field}"})
    write(contributed, run)
    assert any(message in e for e in errors_of(contributed)), errors_of(contributed)


def _group_run(contributed: Path, n: int, contributor: str, index: int, of: int = 3) -> Path:
    run = good_run("transcribed-figures")
    run["id"] = f"rep-{n}"
    run["provenance"]["contributor"] = contributor
    run["results"]["tps"] = 400 + n
    run["provenance"]["source"]["locator"] = f"TPC-B table, row {n}"
    run["repeat"] = {"group": "talk-group-1", "index": index, "of": of}
    return write(contributed, run)


def test_a_run_cannot_join_another_contributors_repeat_group(contributed: Path) -> None:
    """Regression: a fabricated run joined another contributor's repeat group (a duplicate
    `repeat.index`, 4 runs of `of: 3`) and moved its median with no warning on the
    attacker's file. (The three genuine runs share one session; the attacker's differs.)"""
    _note(contributed, "talk-17devel-unspecified")
    genuine = [_group_run(contributed, n, "pgbench-kb maintainers", n) for n in (1, 2, 3)]
    for path in genuine:  # one session: the same source and locator
        path.write_text(
            path.read_text().replace(", row 2", ", row 1").replace(", row 3", ", row 1")
        )
    _group_run(contributed, 9, "mallory", 3)
    found = [e for e in errors_of(contributed) if "repeat" in e]
    assert found == [
        "data/runs/rep-9.yaml:7: repeat.group: group talk-group-1 belongs to 'pgbench-kb "
        f"maintainers' ({contributed}/data/runs/rep-1.yaml): a run cannot join another "
        "contributor's repeats; give this run a group of its own".replace(f"{contributed}/", "")
    ]


def test_duplicate_indexes_and_too_many_repeats_are_errors(contributed: Path) -> None:
    _note(contributed, "talk-17devel-unspecified")
    for n, index in ((1, 1), (2, 2), (3, 3), (4, 3)):
        path = _group_run(contributed, n, "pgbench-kb maintainers", index)
        path.write_text(path.read_text().replace(f", row {n}", ", row 1"))
    found = [e for e in errors_of(contributed) if "repeat" in e]
    assert [e.split(": ", 2)[1] for e in found] == ["repeat.index", "repeat.of"], found
    assert "3 is also the index of data/runs/rep-3.yaml in group talk-group-1" in found[0]
    assert "group talk-group-1 has 4 runs, more than its of: 3" in found[1]
    assert all(e.startswith("data/runs/rep-4.yaml:") for e in found)


def test_a_repeat_from_another_session_is_refused(contributed: Path) -> None:
    _note(contributed, "talk-17devel-unspecified")
    for n in (1, 2):
        path = _group_run(contributed, n, "pgbench-kb maintainers", n)
        path.write_text(path.read_text().replace(f", row {n}", ", row 1"))
    path = _group_run(contributed, 3, "pgbench-kb maintainers", 3)
    found = [e for e in errors_of(contributed) if "repeat" in e]
    assert len(found) == 1 and found[0].startswith("data/runs/rep-3.yaml:")
    assert "differs in provenance.source.locator): repeats come from one session" in found[0]


def test_a_linked_data_folder_is_refused_and_not_read(contributed: Path, tmp_path: Path) -> None:
    """A whole folder linked out of the repository (data/runs → elsewhere) is reported as a
    link, and nothing in it is read by kb check or by kb derive."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.yaml").write_text("id: [secret_value_42\n")
    runs = contributed / "data" / "runs"
    shutil.rmtree(runs)
    runs.symlink_to(outside, target_is_directory=True)
    report = format_report(check_paths([], root=contributed))
    assert "secret_value_42" not in report
    assert f"data/runs:1: (file): a symbolic link (to {outside})" in report
    with pytest.raises(DeriveError, match=r"^data/runs:1: \(file\): a symbolic link"):
        check_pages(contributed)


def test_a_guide_name_differing_only_in_case_is_refused(contributed: Path) -> None:
    """Hugo lowercases addresses: content/guides/Reading.md would be /guides/reading/."""
    page(contributed, "content/guides/Reading.md", GUIDE)
    assert errors_of(contributed) == [
        "content/guides/Reading.md:1: (file): 'Reading.md': a guide's file name is its address "
        "(lower-case letters, digits and '-'; Hugo lowercases addresses, so two names "
        "differing in case would be one page)"
    ]
