"""`kb render`: the site laid out with the run and configuration pages kept from the last
build when their files did not change — and every byte the same as one plain Hugo build."""

from __future__ import annotations

import filecmp
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import KB, REPO

pytestmark = pytest.mark.site


def _hugo() -> str:
    from pgbench_kb.publish.hugo_build import hugo_binary

    return str(hugo_binary())


def _derive(root: Path) -> None:
    done = subprocess.run(
        [str(KB), "derive", "--root", str(root), "--runs", str(root / "runs")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    config = root / "build" / "hugo.toml"
    subprocess.run(
        ["bash", "-c", f'source "{REPO}/scripts/site.sh"; site_hugo_config "$1" "$1" "$2"',
         "-", str(root), str(config)],
        check=True,
    )  # fmt: skip


def _kb_render(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KB), "render", "--root", str(root), "--config", str(root / "build" / "hugo.toml"),
         str(out)],
        capture_output=True, text=True,
    )  # fmt: skip


def _render(root: Path, out: Path) -> str:
    shutil.rmtree(out, ignore_errors=True)
    done = _kb_render(root, out)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _plain_hugo(root: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run(
        [_hugo(), "--source", str(root), "--config", str(root / "build" / "hugo.toml"),
         "--destination", str(out), "--cacheDir", str(root / "build" / "cache" / "hugo"),
         "--logLevel", "warn", "--noBuildLock"],
        check=True, capture_output=True,
    )  # fmt: skip


def _differences(a: Path, b: Path) -> list[str]:
    """Every file that is not byte-identical in both trees (or is in one only)."""
    found = []
    compared = filecmp.dircmp(a, b)
    stack = [(compared, "")]
    while stack:
        node, prefix = stack.pop()
        found += [f"{prefix}{n} (one side only)" for n in node.left_only + node.right_only]
        for name in node.common_files:
            if not filecmp.cmp(Path(node.left) / name, Path(node.right) / name, shallow=False):
                found.append(f"{prefix}{name}")
        stack += [(sub, f"{prefix}{name}/") for name, sub in node.subdirs.items()]
    return sorted(found)


def _laid_out(stdout: str) -> int:
    match = re.search(r"([\d,]+) laid out by Hugo", stdout)
    assert match, stdout
    return int(match.group(1).replace(",", ""))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A `kb synth` tree with its own layouts and configuration (so a test may edit them)."""
    root = tmp_path / "tree"
    subprocess.run(
        [str(KB), "synth", "--out", str(root), "--count", "24", "--seed", "3"],
        check=True, capture_output=True,
    )  # fmt: skip
    shutil.copy(REPO / "config.toml", root / "config.toml")
    shutil.copytree(REPO / "layouts", root / "layouts")
    shutil.copytree(REPO / "static", root / "static")
    return root


def _same_as_plain_hugo(root: Path, tmp: Path) -> str:
    stdout = _render(root, tmp / "rendered")
    _plain_hugo(root, tmp / "plain")
    assert _differences(tmp / "plain", tmp / "rendered") == []
    return stdout


def _add_run(root: Path, seed: int) -> None:
    extra = root.parent / f"extra-{seed}"
    subprocess.run(
        [str(KB), "synth", "--out", str(extra), "--count", "1", "--seed", str(seed)],
        check=True, capture_output=True,
    )  # fmt: skip
    for run in (extra / "runs").rglob("*.yaml"):
        text = run.read_text(encoding="utf-8").replace("group: g000001", f"group: g-extra{seed}")
        (root / "runs" / "extra").mkdir(exist_ok=True)
        (root / "runs" / "extra" / run.name).write_text(text, encoding="utf-8")
    for raw in (extra / "data" / "raw" / "synthetic").iterdir():
        shutil.copy2(raw, root / "data" / "raw" / "synthetic" / raw.name)


def test_pages_are_those_of_one_plain_hugo_build_cold_and_after_changes(tree, tmp_path):
    _derive(tree)
    first = _same_as_plain_hugo(tree, tmp_path)
    leaves = _laid_out(first)
    assert leaves > 24  # every run page and configuration page, laid out once

    # Nothing changed: nothing laid out again, the same bytes.
    _derive(tree)
    assert _laid_out(_same_as_plain_hugo(tree, tmp_path)) == 0

    # One run added, one edited, one removed: only the pages whose files changed.
    _add_run(tree, seed=41)
    runs = sorted((tree / "runs").rglob("*.yaml"))
    edited, removed = runs[0], runs[5]
    text = edited.read_text(encoding="utf-8")
    edited.write_text(re.sub(r"(?m)^(  tps: )(\d)", r"\g<1>1\2", text, count=1), "utf-8")
    assert edited.read_text(encoding="utf-8") != text
    removed.unlink()
    _derive(tree)
    again = _laid_out(_same_as_plain_hugo(tree, tmp_path))
    assert 0 < again < leaves
    gone = removed.stem.lower()
    assert not (tmp_path / "rendered" / "runs" / gone).exists()
    assert not (tree / "build" / "cache" / "render" / "pages" / "runs" / f"{gone}.html").exists()


def test_a_changed_layout_lays_out_every_page_again(tree, tmp_path):
    _derive(tree)
    leaves = _laid_out(_render(tree, tmp_path / "rendered"))
    layout = tree / "layouts" / "_partials" / "run" / "figures.html"
    layout.write_text(layout.read_text(encoding="utf-8") + "<span>edited layout</span>\n", "utf-8")
    _derive(tree)
    stdout = _same_as_plain_hugo(tree, tmp_path)
    assert _laid_out(stdout) == leaves and "all laid out again" in stdout
    page = next((tmp_path / "rendered" / "runs").glob("*/index.html"))
    assert "<span>edited layout</span>" in page.read_text(encoding="utf-8")


def test_a_renamed_hardware_note_relinks_the_run_pages(tree, tmp_path):
    """A run page shows its machine's note by title: a new title lays every page out again."""
    _derive(tree)
    _render(tree, tmp_path / "rendered")
    note = next((tree / "content" / "hardware").glob("*.md"))
    text = note.read_text(encoding="utf-8")
    title = re.search(r"(?m)^title: (.+)$", text)
    assert title
    note.write_text(text.replace(title.group(0), "title: A renamed machine"), "utf-8")
    _derive(tree)
    _same_as_plain_hugo(tree, tmp_path)
    pages = (tmp_path / "rendered" / "runs").glob("*/index.html")
    assert any("A renamed machine" in p.read_text(encoding="utf-8") for p in pages)


def test_a_damaged_cache_is_set_aside_not_trusted(tree, tmp_path):
    _derive(tree)
    _render(tree, tmp_path / "rendered")
    cache = tree / "build" / "cache" / "render"
    (cache / "state.json").write_text("{not json", encoding="utf-8")
    page = next((cache / "pages" / "runs").glob("*.html"))
    page.write_text("damaged", encoding="utf-8")
    stdout = _same_as_plain_hugo(tree, tmp_path)
    assert "all laid out again" in stdout

    # A cached page gone missing (the state still names it) is laid out again.
    page = next((cache / "pages" / "groups").glob("*.html"))
    page.unlink()
    assert _laid_out(_same_as_plain_hugo(tree, tmp_path)) == 1


def test_pages_left_in_the_cache_by_a_build_cut_off_are_replaced(tree, tmp_path):
    """The state is saved without the pages about to change before they change: a build cut
    off there leaves their old HTML in the cache, which the next build replaces."""
    _derive(tree)
    _render(tree, tmp_path / "rendered")
    state_file = tree / "build" / "cache" / "render" / "state.json"
    state = json.loads(state_file.read_text(encoding="utf-8"))
    state["leaves"] = {}
    state_file.write_text(json.dumps(state), encoding="utf-8")
    stdout = _same_as_plain_hugo(tree, tmp_path)
    assert "all laid out again" not in stdout and _laid_out(stdout) > 24


def test_the_state_names_only_pages_whose_html_is_in_the_cache(tree, tmp_path):
    _derive(tree)
    _render(tree, tmp_path / "rendered")
    cache = tree / "build" / "cache" / "render"
    state = json.loads((cache / "state.json").read_text(encoding="utf-8"))
    from pgbench_kb.publish.hugo_build import cached_name

    assert state["leaves"]
    for relative in state["leaves"]:
        assert (cache / "pages" / cached_name(relative)).is_file()


def test_an_existing_destination_is_refused_in_one_line(tree, tmp_path):
    _derive(tree)
    out = tmp_path / "exists"
    out.mkdir()
    done = _kb_render(tree, out)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "exists" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_failing_layout_is_one_line_and_leaves_no_half_built_site(tree, tmp_path):
    _derive(tree)
    layout = tree / "layouts" / "_partials" / "run" / "figures.html"
    layout.write_text(layout.read_text(encoding="utf-8") + "{{ if }}\n", "utf-8")
    out = tmp_path / "site"
    done = _kb_render(tree, out)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: Hugo failed (exit status 1) laying out"), done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
