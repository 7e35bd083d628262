"""The import layers: ``pipeline`` is a library with no Django in it, and no
module reaches into another's private (``_name``) helpers."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "annotator", "tools", "bench")


def _modules(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        if "migrations" not in path.parts:
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def _imported(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.lineno, node.module or "", alias.name


def test_the_library_never_imports_django_or_the_app():
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path, tree in _modules("pipeline")
        for line, module, _ in _imported(tree)
        if module.split(".")[0]
        in ("django", "rest_framework", "celery", "annotator", "tools")
    ]
    assert offending == []


def test_no_module_imports_another_modules_private_names():
    offending = [
        f"{path.relative_to(ROOT)}:{line} imports {name} from {module or '.'}"
        for package in PACKAGES
        for path, tree in _modules(package)
        for line, module, name in _imported(tree)
        if name and name.startswith("_") and not name.startswith("__")
    ]
    assert offending == []
