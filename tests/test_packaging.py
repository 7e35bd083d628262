"""The production image carries what the app runs, not the test tools."""

from __future__ import annotations

import re

from tests.conftest import ROOT

DEV_ONLY = {"pytest", "pytest-django", "playwright", "ruff", "mypy", "mkdocs"}


def _names(path) -> set[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return {
        re.split(r"[=<>\[ ]", line.strip())[0].lower()
        for line in lines
        if line.strip() and not line.startswith(("#", "-r"))
    }


def test_the_image_installs_requirements_without_test_tools():
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.findall(r"pip install (.*)", dockerfile) == ["-r requirements.txt"]
    assert not _names(ROOT / "requirements.txt") & DEV_ONLY


def test_development_requirements_add_the_test_tools_to_the_app_ones():
    dev = ROOT / "requirements-dev.txt"
    assert dev.read_text(encoding="utf-8").count("-r requirements.txt") == 1
    assert _names(dev) == DEV_ONLY
