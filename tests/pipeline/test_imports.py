import json
import pkgutil
import subprocess
import sys

import pipeline


def _loaded_top_level_packages(modules: list[str]) -> set[str]:
    """Import ``modules`` in a fresh interpreter; the top-level packages loaded."""
    code = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout))


def test_importing_pipeline_loads_no_django_torch_or_openai():
    loaded = _loaded_top_level_packages(
        [
            "pipeline",
            "pipeline.cli",
            "pipeline.checkers.extraction.check",
            "pipeline.train",
            "pipeline.score",
            "pipeline.evaluate",
        ]
    )
    assert loaded & {"django", "torch", "openai"} == set()


def test_no_library_module_loads_the_app_or_the_tools():
    modules = [
        info.name
        for info in pkgutil.walk_packages(pipeline.__path__, prefix="pipeline.")
        if info.name != "pipeline.__main__"  # runs the command line
    ]
    assert "pipeline.cli" in modules
    loaded = _loaded_top_level_packages(modules)
    assert (
        loaded & {"django", "rest_framework", "celery", "annotator", "tools"} == set()
    )
