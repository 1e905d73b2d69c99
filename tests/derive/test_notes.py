"""derive/handwritten.py: raw HTML in a hand-written page is a located error; `<` in text is not."""

from __future__ import annotations

import pytest

from pgbench_kb.derive.handwritten import check_pages, raw_html_problems
from pgbench_kb.derive.site import derive_site
from pgbench_kb.errors import DeriveError

FRONT = "---\ntitle: A box\n---\n"


@pytest.mark.parametrize(
    ("body", "line", "tag"),
    [
        ("Fast.\n<b>bold</b>\n", 5, "<b>"),
        ('Text <span class="x">inline</span> here.\n', 4, '<span class="x">'),
        ("<!-- a comment -->\n", 4, "<!--"),
        ("a\n\n<script>window.pwned = 1</script>\n", 6, "<script>"),
        ("<img src=x onerror=alert(1)>\n", 4, "<img src=x onerror=alert(1)>"),
    ],
)
def test_raw_html_is_a_located_error(body, line, tag):
    problems = raw_html_problems(FRONT + body, "content/hardware/box.md")
    assert problems, body
    first = problems[0]
    assert (first.path, first.line, first.field) == ("content/hardware/box.md", line, "(body)")
    assert tag in str(first)
    assert str(first).startswith(f"content/hardware/box.md:{line}: (body): raw HTML")


@pytest.mark.parametrize(
    "body",
    [
        "Latency < 5 ms and tps > 100.\n",
        "a<b, x <= y, 1 <2\n",
        "See <https://www.postgresql.org/docs/> for more.\n",
        "Use `<b>` for bold? No: write **bold**.\n",
        "```\n<b>in a code block</b>\n```\n",
        "    <b>indented code</b>\n",
        'He said "<quoted>" — in backticks: `"<x>"`.\n'.replace('"<quoted>"', "'quoted'"),
    ],
)
def test_text_with_angle_brackets_is_kept(body):
    assert raw_html_problems(FRONT + body, "content/guides/g.md") == []


def test_derive_stops_on_raw_html_before_writing_anything(tmp_path):
    """Regression: raw HTML in a note was dropped by Hugo with a warning that named no line
    and stopped the build (--panicOnWarning)."""
    root = tmp_path / "root"
    (root / "data" / "runs").mkdir(parents=True)
    note = root / "content" / "hardware" / "box.md"
    note.parent.mkdir(parents=True)
    note.write_text(FRONT + "A box.\n\nIt has <em>two</em> disks.\n", encoding="utf-8")
    with pytest.raises(DeriveError) as caught:
        derive_site(root=root)
    assert str(caught.value).startswith("content/hardware/box.md:6: (body): raw HTML '<em>'")
    assert not (root / "build").exists()
    note.write_text(FRONT + "A box.\n\nIt has *two* disks, latency < 5 ms.\n", encoding="utf-8")
    check_pages(root)


def test_what_links_here_lists_the_pages_that_link(tmp_path):
    from pgbench_kb.derive.links import backlinks

    content = tmp_path / "content"
    (content / "guides").mkdir(parents=True)
    (content / "hardware").mkdir()
    (content / "guides" / "g.md").write_text(
        "---\ntitle: A guide\n---\nSee [the box](/hardware/box/), [it again](/hardware/box/#cpu)."
    )
    (content / "guides" / "_index.md").write_text("---\ntitle: Guides\n---\n[g](/guides/g/)\n")
    (content / "hardware" / "box.md").write_text("---\ntitle: Box\n---\nA box.\n")
    assert backlinks(tmp_path) == {
        "guides/g/": [{"title": "Guides", "url": "guides/"}],
        "hardware/box/": [{"title": "A guide", "url": "guides/g/"}],
    }


def test_charts_leave_room_for_labels_vl_convert_measures_narrower() -> None:
    """Regression: on comparison pages the first characters of the bar labels ("1. raid5 →
    raid10") and the end of the legend ("spread_unknown") were clipped, because vl-convert
    sizes the view with text metrics narrower than the browser's. Every spec keeps a margin."""
    from pgbench_kb.derive.charts import base_spec

    padding = base_spec("t", "d", [])["padding"]
    assert padding["left"] >= 20 and padding["right"] >= 20
    # Long labels overflow by more: 260-pixel labels were cut on the storage-layout page.
    from pgbench_kb.derive.charts import LABEL_LIMIT, changes_spec

    overview = changes_spec("t", "d", [{"comparison": "1. x", "change_pct": 1.0,
                                        "verdict": "higher", "panel": "m · w"}])  # fmt: skip
    assert overview["vconcat"][0]["encoding"]["y"]["axis"]["labelLimit"] == LABEL_LIMIT
    assert overview["padding"]["left"] >= LABEL_LIMIT * 0.2
