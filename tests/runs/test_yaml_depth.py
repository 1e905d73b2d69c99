"""Deep nesting in a YAML file is refused at its line, by reading the parser's events (a loop,
not recursion), whatever the form: flow brackets, compact ``- - -`` sequences; brackets in text
are text."""

from __future__ import annotations

import pytest

from pgbench_kb.errors import RunFileError
from pgbench_kb.runs.yamlsafe import MAX_DEPTH, load_yaml_text


def refused_line(text: str) -> int | None:
    with pytest.raises(RunFileError) as caught:
        load_yaml_text(text, path="deep.yaml")
    assert f"nested more than {MAX_DEPTH} levels deep" in str(caught.value)
    return caught.value.line


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100_000])
def test_flow_brackets_too_deep_are_refused_at_their_line(levels: int) -> None:
    text = "schema_version: 1\nnotes: ok\nraw: " + "[" * levels + "]" * levels + "\n"
    assert refused_line(text) == 3


def test_compact_sequences_too_deep_are_refused_at_their_line() -> None:
    text = "schema_version: 1\nraw:\n" + "- " * (MAX_DEPTH + 8) + "x\n"
    assert refused_line(text) == 3


def test_nesting_at_the_limit_loads_and_one_more_level_does_not() -> None:
    # The document's own mapping is level 0; its value's lists are levels 1 to 31, and the
    # number inside is at level 32, the deepest allowed. b's brackets make the loader measure
    # the depth first.
    def nested(lists: int) -> str:
        return "a: " + "[" * lists + "1" + "]" * lists + "\nb: '" + "[" * 80 + "'\n"

    data = load_yaml_text(nested(MAX_DEPTH - 1), path="ok.yaml").data
    value = data["a"]
    for _ in range(MAX_DEPTH - 1):
        value = value[0]
    assert value == 1
    assert refused_line(nested(MAX_DEPTH)) == 1


def test_brackets_inside_text_are_text() -> None:
    brackets = "[" * 200 + "{" * 200
    data = load_yaml_text(f"notes: '{brackets}'\n", path="ok.yaml").data
    assert data == {"notes": brackets}
