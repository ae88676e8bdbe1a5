"""GPU Planner settings: one module, configured by environment variables (see .env.example)."""

import os
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue

from planner.env import env_bool, env_int, env_list, env_secret, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

# DEBUG is on only under runserver unless DEBUG says otherwise.
DEBUG = env_bool("DEBUG", len(sys.argv) > 1 and sys.argv[1] == "runserver")
SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY (or SECRET_KEY_FILE) must be set when DEBUG is off")
    # Only reached with DEBUG on (runserver); production refuses to start without a key.
    SECRET_KEY = "insecure-development-key-only-under-runserver"  # nosec B105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # Listed so /api/docs serves Swagger UI from ninja's bundled static files, not a CDN.
    "ninja",
    "pricing",
    "simulator",
    "planner",
]

MIDDLEWARE = [
    "planner.security.TrustedProxyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Compresses what every middleware below produced (a plan's JSON: 1.2 MB -> 0.1 MB) at
    # level 1, padded with random bytes ("Heal the BREACH") as Django's is, so pages carrying a
    # CSRF token are safe to compress too (planner/compression.py).
    "planner.compression.GZipMiddleware",
    "planner.security.UploadLimitMiddleware",
    "planner.security.SecurityHeadersMiddleware",
    "planner.security.QueueUnavailableMiddleware",
    "planner.fair_shares.LimitsMiddleware",
    "planner.dbretry.DatabaseRetryMiddleware",
    "planner.disk.DiskFullMiddleware",
    "planner.security.NulAddressMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "planner.urls"
WSGI_APPLICATION = "planner.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

# Persistent connections are checked before each request reuses them (CONN_HEALTH_CHECKS): a
# database restart leaves every one of them dead, which without the check was a 500 per
# process.
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"), conn_max_age=60,
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend, waiting up to DB_CONNECT_WAIT_SECONDS for a restarting server.
    DATABASES["default"]["ENGINE"] = "planner.postgres"
DB_CONNECT_WAIT_SECONDS = env_int("DB_CONNECT_WAIT_SECONDS", 15)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and IMMEDIATE transactions let the web server and the worker write without lock errors.
    # Connections persist like on other databases: a new one per request cost a third of a
    # cached page (connect, pragmas, and a cold page cache re-reading a plan row's ~1 MB result
    # to reach the columns stored after it).
    DATABASES["default"]["CONN_MAX_AGE"] = 60
    DATABASES["default"]["OPTIONS"] = {
        "timeout": env_int("SQLITE_BUSY_TIMEOUT_SECONDS", 30),  # a write waits this for a lock
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # Falls back to per-process memory while Redis is down (planner/cache.py, /healthz says so).
    CACHES = {"default": {"BACKEND": "planner.cache.ResilientRedisCache", "LOCATION": REDIS_URL}}
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Every sign-in (form, admin, HTTP basic auth) goes through the throttled backend.
AUTHENTICATION_BACKENDS = ["planner.security.ThrottledModelBackend"]
# HTTP basic auth on the API only over HTTPS (off for local development over plain HTTP).
API_BASIC_AUTH_HTTPS_ONLY = env_bool("API_BASIC_AUTH_HTTPS_ONLY", not DEBUG)

# Production behind HTTPS (docs/operations.md, "Deploying"): HTTPS=1 turns on HSTS, the
# redirect to HTTPS and secure cookies; BEHIND_PROXY=1 trusts the proxy's X-Forwarded-Proto.
HTTPS = env_bool("HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS)
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS)
BEHIND_PROXY = env_bool("BEHIND_PROXY", HTTPS)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Forwarded headers (X-Forwarded-Proto/-For/-Host) are dropped unless the request comes from one
# of these addresses (the reverse proxy's; planner.security.TrustedProxyMiddleware).
TRUSTED_PROXIES = frozenset(env_list("TRUSTED_PROXIES", "127.0.0.1,::1"))
# How many trusted proxies stand in front: the client's address is that many entries from the
# right of X-Forwarded-For (planner.client_ip: sign-in and sign-up throttling, the preview
# limit and the log count per client address). 0: REMOTE_ADDR. `check --deploy` fails with
# HTTPS=1 behind a proxy (BEHIND_PROXY) and 0 here: every client would share the proxy's.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0)
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Mail (password reset): EMAIL_URL smtp://user:password@host:587 (STARTTLS), smtps://...:465
# (TLS) or console:// (printed, for development). Without it password reset is not offered:
# the site cannot send the link, so it says so instead of pretending it did.
EMAIL_URL = env_str("EMAIL_URL", "")
PASSWORD_RESET_ENABLED = bool(EMAIL_URL)
if EMAIL_URL:
    _mail = urlsplit(EMAIL_URL)
    if _mail.scheme == "console":
        EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    elif _mail.scheme in ("smtp", "smtps"):
        EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        EMAIL_HOST = _mail.hostname or "localhost"
        EMAIL_PORT = _mail.port or (465 if _mail.scheme == "smtps" else 587)
        EMAIL_HOST_USER = unquote(_mail.username or "")
        EMAIL_HOST_PASSWORD = unquote(_mail.password or "")
        EMAIL_USE_SSL = _mail.scheme == "smtps"
        EMAIL_USE_TLS = _mail.scheme == "smtp"
    else:
        raise ImproperlyConfigured("EMAIL_URL must start with smtp://, smtps:// or console://")
    DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "GPU Planner <gpu-planner@localhost>")
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    # Files written whole or not at all; a nearly full disk refused (planner/disk.py).
    "default": {"BACKEND": "planner.disk.AtomicFileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG and env_bool("STATIC_MANIFEST", True)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = VAR_DIR / "media"
# Writes under VAR_DIR (uploads, derived tables, reports) that would leave less than this free
# are refused with 507, and /healthz says "degraded" below it: room kept for the database,
# the queue and the logs.
DISK_MIN_FREE_BYTES = env_int("DISK_MIN_FREE_BYTES", 1024**3)

# Uploads: job histories may be large; they stream to disk above 5 MB.
UPLOAD_MAX_BYTES = env_int("UPLOAD_MAX_BYTES", 200 * 1024 * 1024)
# What one user's job histories may take in all (their uploaded files' sizes); deleting a
# history frees its share.
USER_STORAGE_QUOTA_BYTES = env_int("USER_STORAGE_QUOTA_BYTES", 2 * 1024**3)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024
# Room for the other form fields and multipart boundaries around the file.
UPLOAD_FORM_OVERHEAD_BYTES = 1024 * 1024

# Prices older than this are flagged on every page that shows them.
PRICE_STALE_DAYS = env_int("PRICE_STALE_DAYS", 180)
# Plans a visitor without an account may have computed per address (cached ones are free).
ANONYMOUS_PREVIEWS_PER_10_MINUTES = env_int("ANONYMOUS_PREVIEWS_PER_10_MINUTES", 20)
# Accounts made from one client address per hour (sign-up beyond it: 429 with Retry-After).
SIGNUPS_PER_HOUR = env_int("SIGNUPS_PER_HOUR", 5)
# Fair shares (planner.fair_shares): what one user may keep, create per minute (pages and API
# alike; beyond it 429 with Retry-After) and have queued or running at once.
USER_MAX_PLANS = env_int("USER_MAX_PLANS", 500)
USER_MAX_SIMULATIONS = env_int("USER_MAX_SIMULATIONS", 500)
USER_MAX_REPORTS = env_int("USER_MAX_REPORTS", 200)
USER_MAX_CAPACITY_RUNS = env_int("USER_MAX_CAPACITY_RUNS", 100)
USER_MAX_SERVING_PLANS = env_int("USER_MAX_SERVING_PLANS", 500)
USER_MAX_ANALYSES = env_int("USER_MAX_ANALYSES", 2000)
PLANS_PER_MINUTE = env_int("PLANS_PER_MINUTE", 20)
SIMULATIONS_PER_MINUTE = env_int("SIMULATIONS_PER_MINUTE", 20)
REPORTS_PER_MINUTE = env_int("REPORTS_PER_MINUTE", 10)
CAPACITY_RUNS_PER_MINUTE = env_int("CAPACITY_RUNS_PER_MINUTE", 5)
SERVING_PLANS_PER_MINUTE = env_int("SERVING_PLANS_PER_MINUTE", 20)
ANALYSES_PER_MINUTE = env_int("ANALYSES_PER_MINUTE", 10)
# Reports rendered at once for download (page links and the API's report.<fmt>), per user.
REPORT_DOWNLOADS_PER_MINUTE = env_int("REPORT_DOWNLOADS_PER_MINUTE", 30)
USER_MAX_ACTIVE_RUNS = env_int("USER_MAX_ACTIVE_RUNS", 4)

# Celery: Redis when REDIS_URL is set, otherwise kombu's filesystem transport (no server).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker child that grew past this many KiB is replaced once its task ends, so what one
# large run held goes back to the machine (prefork pool; `make run` passes the same value).
CELERY_WORKER_MAX_MEMORY_PER_CHILD = env_int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", 4 * 1024**2)
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 600)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 660)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Short runs (a plan, a simulation: seconds) have their own queue, "short": every worker takes
# both queues, and a worker for "short" alone (`-Q short`, `make run` starts one) keeps them
# moving while long capacity sweeps, analyses or plan sweep parts hold the other processes.
# Each queue its own exchange and key: a message goes to one queue only.
CELERY_TASK_QUEUES = (Queue("celery", Exchange("celery"), routing_key="celery"),
                      Queue("short", Exchange("short"), routing_key="short"))
CELERY_TASK_ROUTES = {"planner.run_plan": {"queue": "short"},
                      "simulator.run_simulation": {"queue": "short"}}
if REDIS_URL:
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # An unacknowledged task (its worker was killed) is redelivered after this many seconds:
    # just past the hard time limit, so the first delivery is surely dead, and the run row it
    # left "running" is reclaimed by the redelivery (planner.runs).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": CELERY_TASK_TIME_LIMIT + env_int("CELERY_REDELIVERY_MARGIN", 30),
        # Sweep for such messages every N seconds (kombu's default is about 100 s).
        "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_SECONDS", 10),
        "unacked_restore_throttle": 1,
    }
else:
    _queue_dir = VAR_DIR / "celery-queue"
    (_queue_dir / "processed").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_URL = "filesystem://"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir),
        "data_folder_out": str(_queue_dir),
        "processed_folder": str(_queue_dir / "processed"),
        "store_processed": False,
        # kombu keeps its exchange tables here (its default is ./control in the work tree).
        "control_folder": str(VAR_DIR / "celery-control"),
    }
    # Results live in the database rows the tasks update, so no result backend is needed.
    CELERY_RESULT_BACKEND = None
    CELERY_TASK_IGNORE_RESULT = True

# Price refresh (pricing/refresh.py): provider endpoints, the GCP key, and a daily schedule
# that Celery beat runs when PRICE_REFRESH_DAILY=1 (start `celery -A planner beat` too).
PRICE_REFRESH_AWS_URL = env_str("PRICE_REFRESH_AWS_URL", "https://pricing.us-east-1.amazonaws.com")
PRICE_REFRESH_AZURE_URL = env_str("PRICE_REFRESH_AZURE_URL", "https://prices.azure.com")
PRICE_REFRESH_GCP_URL = env_str("PRICE_REFRESH_GCP_URL", "https://cloudbilling.googleapis.com")
GCP_BILLING_API_KEY = env_str("GCP_BILLING_API_KEY", "")
# Runs (planner.runs): a running task renews its lease every RUN_HEARTBEAT_SECONDS; a lease
# older than RUN_LEASE_SECONDS is a dead worker's, and the sweep (every RUNS_SWEEP_SECONDS)
# sends its run again; the sweep also sends what the outbox still holds (broker was down).
RUN_HEARTBEAT_SECONDS = env_int("RUN_HEARTBEAT_SECONDS", 10)
RUN_LEASE_SECONDS = env_int("RUN_LEASE_SECONDS", 45)
RUNS_SWEEP_SECONDS = env_int("RUNS_SWEEP_SECONDS", 15)
CELERY_BEAT_SCHEDULE = {
    "sweep-runs": {"task": "planner.sweep_runs", "schedule": float(RUNS_SWEEP_SECONDS)},
} | (
    {"refresh-prices-daily": {"task": "pricing.refresh_prices",
                              "schedule": env_int("PRICE_REFRESH_INTERVAL_SECONDS", 86_400)}}
    if env_bool("PRICE_REFRESH_DAILY", False) else {}
)
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# A plan sweep larger than this many cells (instance types x node counts x layouts) is split
# into parts that several workers sweep at once (planner.plans.services.sweep_split). The
# shipped catalog is about 1,000,000 cells per plan, which one task sweeps in under a second.
PLAN_SWEEP_PART_CELLS = env_int("PLAN_SWEEP_PART_CELLS", 2_000_000)
# A capacity sweep over more jobs x grid points than this is split into parts (one task each).
CAPACITY_PART_JOB_POINTS = env_int("CAPACITY_PART_JOB_POINTS", 20_000_000)
# Region codes a plan prefers among equal prices, first first; blank: each provider's first US
# region (planner.core.providers home_region). Cards name the other regions at that price.
PLAN_PREFERRED_REGIONS = env_list("PLAN_PREFERRED_REGIONS")
# A queued run older than this is sent again by the sweep (planner.runs.runs_sweep).
RUNS_REQUEUE_AFTER_SECONDS = env_int("RUNS_REQUEUE_AFTER_SECONDS", 60)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Every line names the client's address (planner.client_ip), "-" outside a request.
    "filters": {"client": {"()": "planner.client_ip.ClientAddressFilter"}},
    "formatters": {"client": {"format": "%(levelname)s %(name)s [%(client)s] %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["client"],
                             "formatter": "client"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING")},
}

NINJA_PAGINATION_PER_PAGE = 50

# Tests that run a real worker share the test database through a file.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")}


def _plotly_bundle() -> str:
    import plotly

    return f"vendor/plotly-{plotly.__version__}.min.js"


PLOTLY_JS = _plotly_bundle()
