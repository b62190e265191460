"""The house rules a newcomer relies on: modules of one job, functions that fit on a screen."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "zettel_lsp"
MAX_FILE_LINES = 600  # the settings table aside: one entry per setting, with its docs
MAX_FUNCTION_LINES = 80
MAX_CLASS_LINES = 400


def test_no_module_function_or_class_is_too_long() -> None:
    too_long: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent)
        text = path.read_text(encoding="utf-8")
        lines = text.count("\n")
        if lines > MAX_FILE_LINES and path.name != "settings_schema.py":
            too_long.append(f"{rel}: {lines} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                limit = MAX_FUNCTION_LINES
            elif isinstance(node, ast.ClassDef):
                limit = MAX_CLASS_LINES
            else:
                continue
            span = (node.end_lineno or node.lineno) - node.lineno + 1
            if span > limit:
                too_long.append(f"{rel}:{node.lineno} {node.name}: {span} lines")
    assert not too_long, "\n".join(too_long)
