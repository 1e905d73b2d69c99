"""The map checks itself: every import of the package follows the import-order table of
docs/architecture.md, no two modules share a name, and the table of part sizes there is the
one the code has (rewritten with KB_UPDATE_GOLDENS=1)."""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

import pytest

from kbtest import REPO, UPDATE_GOLDENS

PACKAGE = REPO / "scripts" / "pgbench_kb"
DOC = REPO / "docs" / "architecture.md"
ORDER = re.compile(r"<!-- import order:.*?-->\n(.*?)<!-- end import order -->", re.S)
SIZES = re.compile(r"(<!-- part sizes:.*?-->\n)(.*?)(<!-- end part sizes -->)", re.S)


def part_of(module: str) -> str:
    """``pgbench_kb.runs.check.raw`` → ``runs``; ``pgbench_kb.errors`` → ``errors``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def allowed_imports() -> dict[str, set[str] | None]:
    """The doc's table: part → the parts it may import (None: any)."""
    table = ORDER.search(DOC.read_text(encoding="utf-8"))
    assert table, "docs/architecture.md has no import-order table"
    allowed: dict[str, set[str] | None] = {}
    for line in table.group(1).splitlines()[2:]:
        left, right = (cell.strip() for cell in line.strip("|").split("|"))
        targets = set(re.findall(r"`([\w_]+)`", right))
        for name in re.findall(r"`([\w_]+)`", left):
            allowed[name] = None if right == "any" else targets
    return allowed


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports_of(path: Path, text: str | None = None) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the package in ``path`` (or in ``text``,
    read as if it were that module)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return [(line, t) for line, t in found if t == "pgbench_kb" or t.startswith("pgbench_kb.")]


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_every_part_of_the_package_is_in_the_table():
    parts = {part_of(module_name(p)) for p in MODULES} - {"__init__"}
    assert parts <= set(allowed_imports()), "add these to docs/architecture.md's import order"


def test_every_import_follows_the_import_order():
    allowed = allowed_imports()
    wrong = []
    for path in MODULES:
        here = part_of(module_name(path))
        may = allowed.get(here)
        if here == "__init__" or may is None:
            continue
        for line, target in imports_of(path):
            there = part_of(target)
            if there not in (here, "__init__") and there not in may:
                wrong.append(f"{path.relative_to(REPO)}:{line}: {here} imports {target}")
    assert wrong == [], "\n".join(wrong)


def test_the_order_test_sees_a_wrong_import():
    """The checker itself: a planted back-arrow (runs importing bench) is found, relative
    imports included."""
    planted = PACKAGE / "runs" / "check" / "machine_load.py"
    text = "from pgbench_kb.bench.quiet import TOP_OTHERS\nfrom ...bench import facts\n"
    found = imports_of(planted, text)
    assert found == [(1, "pgbench_kb.bench.quiet"), (2, "pgbench_kb.bench")]
    assert {part_of(t) for _line, t in found} - allowed_imports()["runs"] == {"bench"}


def test_no_two_modules_share_a_name():
    names = Counter(p.name for p in MODULES if p.name not in ("__init__.py", "__main__.py"))
    assert [n for n, count in names.items() if count > 1] == []


def sizes_table() -> str:
    """Modules, lines and modules over 500 lines per part (the doc's generated table)."""
    rows: dict[str, list[int]] = {}
    for path in MODULES:
        lines = len(path.read_text(encoding="utf-8").splitlines())
        row = rows.setdefault(
            part_of(module_name(path)).replace("__init__", "(package)"), [0, 0, 0]
        )
        row[0] += 1
        row[1] += lines
        row[2] += lines > 500
    out = ["| part | modules | lines | over 500 lines |", "|---|---:|---:|---:|"]
    for part, (count, lines, big) in sorted(rows.items()):
        out.append(f"| `{part}` | {count} | {lines:,} | {big} |")
    total = [sum(r[i] for r in rows.values()) for i in range(3)]
    out.append(f"| all | {total[0]} | {total[1]:,} | {total[2]} |")
    return "\n".join(out) + "\n"


def test_the_part_sizes_in_the_doc_are_the_code_s():
    text = DOC.read_text(encoding="utf-8")
    block = SIZES.search(text)
    assert block, "docs/architecture.md has no part-sizes block"
    want = sizes_table()
    if UPDATE_GOLDENS and block.group(2) != want:
        DOC.write_text(text[: block.start(2)] + want + text[block.end(2) :], encoding="utf-8")
        text = DOC.read_text(encoding="utf-8")
        block = SIZES.search(text)
    assert block.group(2) == want, "out of date: run it with KB_UPDATE_GOLDENS=1"


@pytest.mark.parametrize("limit", [6])
def test_few_modules_exceed_500_lines(limit):
    big = [
        f"{p.relative_to(PACKAGE)} ({n})"
        for p in MODULES
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 500
    ]
    assert len(big) <= limit, big
