import subprocess
import sys


def test_importing_pipeline_loads_no_django_torch_or_openai():
    code = (
        "import sys, pipeline, pipeline.cli, pipeline.check, pipeline.train, "
        "pipeline.score, pipeline.evaluate, pipeline.plots\n"
        "heavy = [m for m in ('django', 'torch', 'openai') if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
