"""The project's top level and its Hugo configuration: what would let a change steer Hugo.

Hugo reads more than the configuration file it is given: a ``config/`` folder is merged into the
configuration (``config/_default/module.toml`` can mount ``/etc`` into the site), ``themes/`` is
searched for themes, ``assets/``, ``i18n/`` and ``archetypes/`` are read as parts of the site,
and a ``hugo.toml``/``.yaml``/``.json`` is a configuration it looks for. ``kb render`` runs Hugo
with an empty configuration folder and themes folder of its own; these rules refuse the entries
besides, so ``make check`` says so before a build. In ``config.toml``, a mount whose source is
absolute or climbs out of the project (``..``) would publish files from elsewhere, and a module
import or a folder setting would read parts of the site from elsewhere: refused too.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from pgbench_kb.runs.check.report import Finding

#: Top-level entries Hugo would read as configuration or site parts (review/paths.py refuses
#: them in a pull request; this refuses them in a tree).
REFUSED_TOP = {
    "config": "a config/ folder is merged by Hugo into the site's configuration",
    "themes": "a themes/ folder is read by Hugo as a theme",
    "assets": "an assets/ folder is read by Hugo as the site's assets",
    "i18n": "an i18n/ folder is read by Hugo as the site's translations",
    "archetypes": "an archetypes/ folder is read by Hugo as page templates",
}
REFUSED_HUGO = "a hugo.* file is a configuration Hugo looks for"
#: Settings of config.toml that would read the site's parts from elsewhere.
REFUSED_KEYS = (
    "theme", "themesDir", "configDir", "workingDir", "contentDir", "dataDir", "layoutDir",
    "staticDir", "assetDir", "archetypeDir", "i18nDir", "publishDir", "resourceDir", "cacheDir",
)  # fmt: skip
FIX = "the site's configuration is config.toml alone: remove it"


def refused_top(name: str) -> str | None:
    """Why a top-level entry may not be in the project, or None."""
    if name in REFUSED_TOP:
        return REFUSED_TOP[name]
    if name == "hugo" or name.startswith("hugo."):
        return REFUSED_HUGO
    return None


def _outside(source: str) -> bool:
    """A mount source that is absolute (any system's form) or climbs out with ``..``."""
    if source.startswith(("/", "~", "\\")) or PureWindowsPath(source).drive:
        return True
    return ".." in PurePosixPath(source.replace("\\", "/")).parts


def _lines(text: str, pattern: str) -> list[int]:
    """The line numbers of every match of ``pattern`` at the start of a line."""
    return [text.count("\n", 0, m.start()) + 1 for m in re.finditer(pattern, text, re.M)]


def check_config(path: Path, shown: str) -> list[Finding]:
    """``config.toml``'s mounts, imports and folder settings."""
    try:
        text = path.read_text(encoding="utf-8")
        config: dict[str, Any] = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return [Finding(shown, None, "(file)", f"cannot be read as TOML: {exc}")]
    found = []
    for key in REFUSED_KEYS:
        if key in config:
            line = next(iter(_lines(text, rf"^\s*{key}\s*="), None))
            found.append(Finding(shown, line, key, f"reads the site from elsewhere: {FIX}"))
    module = config.get("module") if isinstance(config.get("module"), dict) else {}
    for key in ("imports", "replacements", "workspace"):
        if module.get(key):
            line = next(iter(_lines(text, rf"^\s*(\[\[module\.{key}\]\]|{key}\s*=)")), None)
            found.append(
                Finding(shown, line, f"module.{key}", f"reads the site from elsewhere: {FIX}")
            )
    mounts = module.get("mounts") if isinstance(module.get("mounts"), list) else []
    lines = _lines(text, r"^\s*source\s*=")
    for index, mount in enumerate(mounts):
        source = mount.get("source") if isinstance(mount, dict) else None
        if not isinstance(source, str) or _outside(source):
            found.append(
                Finding(
                    shown,
                    lines[index] if index < len(lines) else None,
                    f"module.mounts[{index}].source",
                    f"{source!r} is outside the project (absolute, or with ..): a mount "
                    "publishes its files; mount a folder of the project (content, layouts…)",
                )
            )
    return found


def check_tree(root: Path) -> list[Finding]:
    """Top-level entries Hugo would read, and config.toml's mounts."""
    found = []
    try:
        names = sorted(p.name for p in root.iterdir())
    except OSError:
        return []
    for name in names:
        why = refused_top(name)
        if why is not None:
            found.append(Finding(str(root / name), None, "(file)", f"{why}: {FIX}"))
    config = root / "config.toml"
    if config.is_file() and not config.is_symlink():
        found.extend(check_config(config, str(config)))
    return found
