"""The manual's API page (docs/api.md) is the schema the app serves, as
``make docs`` writes it: a changed endpoint without a rebuilt page fails."""

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, _database_url, _test_broker_url
from tools.api_docs import render


@pytest.mark.django_db
def test_the_api_page_is_the_schema_the_app_serves(tmp_path, settings):
    # The deployment's app, without the tests' own checker kind.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("KIND_APPS", "DJANGO_SETTINGS_MODULE", "DEBUG")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="annotator.core.settings",
        DATABASE_URL=_database_url(settings.DATABASES["default"]),
        CELERY_BROKER_URL=_test_broker_url(settings.CELERY_BROKER_URL),
    )
    schema = tmp_path / "openapi.json"
    out = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--format", "openapi-json"]
        + ["--file", str(schema)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    page = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    assert render(json.loads(schema.read_text())) == page, (
        "docs/api.md is not the schema the app serves: run `make docs`"
    )
