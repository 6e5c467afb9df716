"""Sizes the house keeps: no function over 60 lines, no module over 500 lines (issue 31).

A long function does several things under one name and a long module holds several concerns;
both hide behaviour from a newcomer. The limits are checked over the whole package, with no
list of exceptions: a function or module that grows past them is split where it grew.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "judge"
MAX_FUNCTION_LINES = 60
MAX_MODULE_LINES = 500


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _long_functions(source: str, limit: int) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function or method of ``source`` longer than ``limit`` lines
    (from its ``def`` line, decorators excluded, to its last line)."""
    return [
        (node.name, node.end_lineno - node.lineno + 1)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > limit
    ]


def test_the_walk_measures_functions_and_methods() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(60))
    source = f"def long():\n{body}\n\nclass C:\n    def short(self):\n        return 1\n"
    assert _long_functions(source, 60) == [("long", 61)]
    assert _long_functions(source, 61) == []
    nested = f"class C:\n    def method(self):\n{body.replace('    ', '        ')}\n"
    assert _long_functions(nested, 60) == [("method", 61)]


def test_no_function_over_60_lines() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{name} {lines} lines"
        for path in _modules()
        for name, lines in _long_functions(path.read_text(encoding="utf-8"), MAX_FUNCTION_LINES)
    ]
    assert found == [], "split these functions where they grew"


def test_no_module_over_500_lines() -> None:
    found = [
        f"{path.relative_to(PACKAGE.parent)} {lines} lines"
        for path in _modules()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert found == [], "split these modules by concern"
