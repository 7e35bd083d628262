"""The README's and the manual's commands run as written after `make setup`.

Every command of their shell blocks (the README's, then each page of
`docs/` in the manual's order) runs here, in order, from the
repository root, with the settings `make setup` wrote (var/dev.env) and the
starter scorer it built. Three things differ, each named: the extraction
talks to the scripted OpenAI-compatible server instead of a local Ollama,
the app's commands use the test database and broker, and what serves forever
(the quick start's `make`, runserver, the Celery worker and beat) or
measures (bench/) is left to their own tests.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, _database_url, _test_broker_url

OLLAMA = "http://localhost:11434/v1"
LONG_RUNNING = ("runserver", "celery", "bench/")


def manual_pages() -> list[Path]:
    """The README, then the manual's pages in the order mkdocs.yml lists them."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(nav) -> list[str]:
        found = []
        for entry in nav:
            for value in entry.values():
                found += pages(value) if isinstance(value, list) else [value]
        return found

    return [ROOT / "README.md", *(ROOT / "docs" / p for p in pages(config["nav"]))]


def readme_commands() -> list[str]:
    text = "\n".join(p.read_text(encoding="utf-8") for p in manual_pages())
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                commands.append(line)
    return commands


def test_the_readme_lists_the_commands_this_test_runs():
    commands = readme_commands()
    assert "make demo" in commands and "make test" in commands
    assert any("pipeline extract" in c for c in commands)
    assert any("manage.py import_documents" in c for c in commands)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_readme_command_runs_as_written(fake_openai, settings):
    assert (ROOT / "var" / "dev.env").is_file(), "`make setup` writes var/dev.env"
    assert (ROOT / "var" / "scorers" / "starter" / "metadata.json").is_file(), (
        "`make setup` builds the starter scorer"
    )
    fake_openai.responder = lambda body: {"entities": []}
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("SECRET_KEY", "DEBUG", "DJANGO_SETTINGS_MODULE")
    }
    env.update(
        DATABASE_URL=_database_url(settings.DATABASES["default"]),
        CELERY_BROKER_URL=_test_broker_url(settings.CELERY_BROKER_URL),
        OPENAI_API_KEY="readme-test",
    )
    ran = []
    for command in readme_commands():
        if command.startswith("make") or any(w in command for w in LONG_RUNNING):
            continue
        args = shlex.split(command.replace(OLLAMA, fake_openai.base_url))
        out = subprocess.run(
            args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, (
            f"{command}\n{out.stdout[-2000:]}{out.stderr[-4000:]}"
        )
        ran.append(command)
    assert len(ran) >= 11, ran
    assert (ROOT / "var" / "try" / "scorer" / "metadata.json").is_file()
    assert any((ROOT / "var" / "try" / "export").iterdir())
