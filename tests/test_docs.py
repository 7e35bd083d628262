"""The manual (docs/, mkdocs.yml) builds with no broken link or stray page."""

import subprocess
import sys

from tests.conftest import ROOT


def test_the_manual_builds_without_a_warning(tmp_path):
    site = tmp_path / "site"
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    for page in ("index.html", "api/index.html", "checkers/citations/index.html"):
        assert (site / page).is_file(), page
