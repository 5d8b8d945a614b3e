"""Settings of ugcsite. Everything that differs between machines comes from the environment.

DATABASE_URL   PostgreSQL (default: the local cluster that `make run` starts under var/); several
               hosts (h1:p1,h2:p2) with ?target_session_attrs=read-write find the primary (PG_HA)
DATABASE_REPLICA_URL  a streaming replica for lag-tolerant reads (ugcsite.platform.replicas; PG_REPLICAS)
REDIS_URL      the data Redis: timelines, sets, board cache (default: the local one under var/)
REDIS_CLUSTER  set to 1 when REDIS_URL names a node of a Redis Cluster
CELERY_BROKER_URL, CACHE_URL  plain Redis for Celery and Django's cache (default: REDIS_URL's
               server, databases 1 and 2; neither can use a cluster)
DJANGO_DEBUG   1 for development (default), 0 for production (then DJANGO_SECRET_KEY is required)
"""

import os
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


def redis_db_url(url: str, db: int) -> str:
    """The same Redis server as ``url``, another logical database."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{db}", parts.query, parts.fragment))


DEBUG = env_bool("DJANGO_DEBUG", True)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("Set DJANGO_SECRET_KEY: production settings need a secret key of their own.")
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"
ALLOWED_HOSTS = os.environ.get("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
# The public base address of the site, without a trailing slash: every absolute address it gives
# others (a board's picture in Open Graph tags, federation's ids) starts with it. make run serves
# on PORT (8000 by default).
SITE_URL = os.environ.get("SITE_URL", f"http://127.0.0.1:{os.environ.get('PORT', '8000')}").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "social",
    "feeds",
]

MIDDLEWARE = [
    "ugcsite.platform.logs.RequestLogMiddleware",  # first: names every request and logs every answer
    "ugcsite.platform.metrics.RequestMetricsMiddleware",
    "ugcsite.middleware.BodySizeLimitMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "ugcsite.middleware.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "ugcsite.platform.replicas.ReplicaReadsMiddleware",  # after auth: whose writes, who reads
    "django.contrib.messages.middleware.MessageMiddleware",
    "ugcsite.middleware.StaffSecondFactorMiddleware",
    "ugcsite.middleware.SessionTouchMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "ugcsite.middleware.DomainErrorMiddleware",
    "ugcsite.middleware.ServiceUnavailableMiddleware",
]

ROOT_URLCONF = "ugcsite.urls"
WSGI_APPLICATION = "ugcsite.wsgi.application"
ASGI_APPLICATION = "ugcsite.asgi.application"
AUTH_USER_MODEL = "social.User"
LOGIN_URL = "/login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
CSRF_FAILURE_VIEW = "ugcsite.views.csrf_failure"

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
                "feeds.context_processors.header",
                "feeds.context_processors.drawing",
            ],
        },
    },
]

# The ports of the servers `make run` starts, as it chose them for this clone (var/ports.env), or
# the defaults it chooses when they are free (scripts/ports.env): so manage.py by hand finds them.
LOCAL_PORTS = {
    name: int(value)
    for path in (BASE_DIR / "scripts" / "ports.env", BASE_DIR / "var" / "ports.env")
    if path.exists()
    for name, _, value in (line.partition("=") for line in path.read_text().splitlines())
    if name.isupper() and value.isdigit()
}

# PostgreSQL connections: a bounded pool in every process (Django's psycopg pool), never a
# connection per thread. Persistent per-thread connections (CONN_MAX_AGE) leaked under ASGI, where
# each request's sync code may run on a new thread: three uvicorn workers held all 100 of
# PostgreSQL's connections within minutes. A process holds at most DATABASE_POOL_SIZE; a request
# that finds them all busy waits DATABASE_POOL_TIMEOUT seconds, then answers 503 with Retry-After
# (psycopg_pool's PoolTimeout is an OperationalError). Each connection is checked as it leaves
# the pool (conn_health_checks), so after a PostgreSQL restart the first request gets a fresh one.
# The whole site's budget (every process of `make run` x this) is ugcsite.serving.connection_budget().
DATABASE_POOL_SIZE = int(os.environ.get("DATABASE_POOL_SIZE", "4"))
DATABASE_POOL_TIMEOUT = float(os.environ.get("DATABASE_POOL_TIMEOUT", "3"))


def database_from_url(url: str) -> dict:
    """A DATABASES entry from a URL, libpq's multi-host form too (PG_HA=1 make run:
    ``postgres://u@h1:p1,h2:p2/db?target_session_attrs=read-write``), whose hosts psycopg tries
    in turn until one is the primary."""
    hosts = urlsplit(url).netloc.rpartition("@")[2]
    config = dj_database_url.parse(
        url.replace(hosts, hosts.split(",")[0], 1),
        conn_max_age=0,  # the pool keeps connections; Django refuses both at once
        conn_health_checks=True,
    )
    if "," in hosts:
        pairs = [host.rpartition(":") for host in hosts.split(",")]
        config["HOST"], config["PORT"] = ",".join(p[0] for p in pairs), ",".join(p[2] for p in pairs)
    return config


DATABASES = {
    "default": database_from_url(
        os.environ.get("DATABASE_URL", f"postgres://ugcsite@127.0.0.1:{LOCAL_PORTS['PG_PORT']}/ugcsite")
    )
}
if DATABASE_POOL_SIZE:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": DATABASE_POOL_SIZE,
        "timeout": DATABASE_POOL_TIMEOUT,
        "max_idle": 300,  # a connection idle this long above min_size is closed
        # A connection that cannot be made is tried again after 1 s, then given up after 2 s,
        # which frees its slot: the next request after PostgreSQL is back connects at once
        # (psycopg_pool's own default backs off for up to 5 minutes, doubling each time, so the
        # first writes after a restart could wait past DATABASE_POOL_TIMEOUT and answer 503).
        "reconnect_timeout": 2,
    }
else:  # 0: no pool of our own, a connection a request, for a PgBouncer in front (transaction pooling)
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
# A streaming replica for the reads that tolerate a little lag (ugcsite.platform.replicas: which views, the
# read-your-writes rule, when it is skipped; PG_REPLICAS=1 make run). Its pool is the primary's,
# but a request waits at most REPLICA_CONNECT_TIMEOUT for one of its connections, then reads the
# primary: a replica that just died costs the first request after it that long, once.
REPLICA_READ_VIEWS = {"search", "user", "user-boards", "followers", "following", "boards:search", "people:profile"}
REPLICA_MAX_LAG_BYTES = int(os.environ.get("REPLICA_MAX_LAG_BYTES", str(16 * 1024 * 1024)))
REPLICA_CHECK_SECONDS = float(os.environ.get("REPLICA_CHECK_SECONDS", "1"))  # a probe a process at most this often
REPLICA_CONNECT_TIMEOUT = float(os.environ.get("REPLICA_CONNECT_TIMEOUT", "1"))
if os.environ.get("DATABASE_REPLICA_URL"):
    DATABASES["replica"] = {**database_from_url(os.environ["DATABASE_REPLICA_URL"]), "TEST": {"MIRROR": "default"}}
    if DATABASE_POOL_SIZE:
        DATABASES["replica"].setdefault("OPTIONS", {})["pool"] = {
            **DATABASES["default"]["OPTIONS"]["pool"],
            "timeout": REPLICA_CONNECT_TIMEOUT,
        }
    else:
        DATABASES["replica"]["DISABLE_SERVER_SIDE_CURSORS"] = True
DATABASE_ROUTERS = ["ugcsite.platform.replicas.ReplicaRouter"]
REPLICA_RYW_SECONDS = int(os.environ.get("REPLICA_RYW_SECONDS", "3600"))  # how long a write's LSN is kept
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", f"redis://127.0.0.1:{LOCAL_PORTS['REDIS_PORT']}/0")
REDIS_CLUSTER = env_bool("REDIS_CLUSTER", False)
# Seconds the data Redis has to take a connection, and to answer a command (ugcsite.platform.redis): a hung
# server is then a 503 (or a task tried again), not a request or worker waiting for ever. Above
# the longest single command or pipeline we send (a rebuild's batch of 1,000 users).
REDIS_CONNECT_TIMEOUT = float(os.environ.get("REDIS_CONNECT_TIMEOUT", "2"))
REDIS_SOCKET_TIMEOUT = float(os.environ.get("REDIS_SOCKET_TIMEOUT", "10"))
_plain_redis = os.environ.get("PLAIN_REDIS_URL", REDIS_URL)

CACHES = {
    "default": {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": os.environ.get("CACHE_URL", redis_db_url(_plain_redis, 2)),
        "OPTIONS": {"CLIENT_CLASS": "django_redis.client.DefaultClient"},
    }
}

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", redis_db_url(_plain_redis, 1))
if REDIS_CLUSTER:
    _cluster_node = urlsplit(REDIS_URL).netloc
    for _name, _url in (("CELERY_BROKER_URL", CELERY_BROKER_URL), ("CACHE_URL", CACHES["default"]["LOCATION"])):
        if urlsplit(_url).netloc == _cluster_node:
            raise ImproperlyConfigured(
                f"{_name} points at the Redis Cluster node {_cluster_node} (REDIS_URL), but Celery's broker and "
                "Django's cache cannot use a cluster. Set PLAIN_REDIS_URL (or CELERY_BROKER_URL and CACHE_URL) to a "
                "plain Redis, e.g. PLAIN_REDIS_URL=redis://127.0.0.1:6379/0; `make run` starts one itself when none is set."
            )
# The Channels layer of the live boards (feeds.live): on the plain Redis, db 3, like the broker
# and the cache (channels_redis cannot use a cluster). ``capacity`` bounds what waits for one
# connection: a connection that falls behind loses messages there and reads them back from the
# board's op log, so a slow reader costs a bounded amount of memory.
CHANNEL_LAYER_URL = os.environ.get("CHANNEL_LAYER_URL", redis_db_url(_plain_redis, 3))
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 times socket reads out (5 s) no later than channels_redis's blocking pop (5 s): give
            # it room; and its pool holds 100 connections, fewer than a busy process's broadcasts at once.
            "hosts": [{"address": CHANNEL_LAYER_URL, "socket_timeout": 30, "max_connections": 1000}],
            "capacity": 200,
            "expiry": 30,
            "prefix": "ugc-live",
        },
    }
}
if REDIS_CLUSTER and urlsplit(CHANNEL_LAYER_URL).netloc == urlsplit(REDIS_URL).netloc:
    raise ImproperlyConfigured(
        "CHANNEL_LAYER_URL points at the Redis Cluster node of REDIS_URL, but the Channels layer "
        "cannot use a cluster. Set PLAIN_REDIS_URL (or CHANNEL_LAYER_URL) to a plain Redis."
    )
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "celery")  # /metrics reports its depth
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True  # a task killed mid-run is redelivered: tasks are idempotent
# ...even when it is its worker process that dies (OOM killer, a deploy's SIGKILL): without this,
# Celery acknowledges such a task as failed and it is lost. (A task that always kills its
# process would then come back forever; none of ours can.)
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# A message a worker took and never acknowledged (the whole machine gone) goes back to the queue
# after this long; Celery's default is an hour of a feed missing a board. Five minutes is far
# above any task's run (a fan-out batch takes well under a second; the longest, a suspension's
# lists or its lifting, are O(one user's edges): seconds), so a slow task is not run twice.
# The only tasks sent with a countdown are the retries after a Redis or PostgreSQL blip (feeds.tasks,
# at most 30 s ahead: well inside this timeout, so a waiting retry is never delivered twice).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "300"))}
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BEAT_SCHEDULE: dict = {}  # filled below, beside the settings of each scheduled task

# PostgreSQL's backups (ugcsite/backups.py, scripts/pg-backup.sh): make run exports the pgBackRest
# config it writes; beat takes a full backup weekly and a differential daily (cron: minute hour
# day-of-month month day-of-week, UTC). Between them the WAL archive allows any moment.
PG_BACKUP_CONFIG = os.environ.get("PG_BACKUP_CONFIG", "")
PG_BACKUP_FULL_CRON = os.environ.get("PG_BACKUP_FULL_CRON", "0 3 * * 0")
PG_BACKUP_DIFF_CRON = os.environ.get("PG_BACKUP_DIFF_CRON", "0 3 * * 1-6")
for _kind, _cron in (("full", PG_BACKUP_FULL_CRON), ("diff", PG_BACKUP_DIFF_CRON)):
    _fields = _cron.split()
    if len(_fields) != 5:
        raise ImproperlyConfigured(f"PG_BACKUP_{_kind.upper()}_CRON is five cron fields (0 3 * * 0), not {_cron!r}.")
    CELERY_BEAT_SCHEDULE[f"pg-backup-{_kind}"] = {
        "task": "ugcsite.backups.pg_backup",
        "schedule": crontab(
            minute=_fields[0],
            hour=_fields[1],
            day_of_month=_fields[2],
            month_of_year=_fields[3],
            day_of_week=_fields[4],
        ),
        "args": (_kind,),
    }

AUTH_PASSWORD_VALIDATORS: list = []  # docs/api.md fixes the password rule (8-128 characters)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Development and tests serve static files straight from static/; production from collectstatic's
# hashed, compressed copies.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
# Uploaded pictures (feeds.images) go through Django's storage API: by default files under
# MEDIA_ROOT, served by nginx at MEDIA_URL with a long cache (ugcsite.serving). An S3-compatible
# store is settings alone (docs/operations.md, "Pictures"): MEDIA_STORAGE_BACKEND=
# storages.backends.s3.S3Storage with django-storages installed and the AWS_* settings below.
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "media"))
MEDIA_URL = os.environ.get("MEDIA_URL", "/media/")
MEDIA_STORAGE_BACKEND = os.environ.get("MEDIA_STORAGE_BACKEND", "django.core.files.storage.FileSystemStorage")
for _name in ("AWS_STORAGE_BUCKET_NAME", "AWS_S3_ENDPOINT_URL", "AWS_S3_REGION_NAME", "AWS_S3_CUSTOM_DOMAIN"):
    if os.environ.get(_name):
        globals()[_name] = os.environ[_name]
# What each person's pictures may hold in all (the stored copies, in bytes): an upload past it is a 400.
IMAGE_QUOTA_BYTES = int(os.environ.get("IMAGE_QUOTA_BYTES", str(200 * 1024 * 1024)))
STORAGES = {
    "default": {"BACKEND": MEDIA_STORAGE_BACKEND},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# docs/api.md: bodies of at most 2 MiB; larger ones answer 413 (ugcsite.middleware).
API_MAX_BODY_BYTES = 2 * 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
API_TOKEN_LIFETIME = timedelta(days=int(os.environ.get("API_TOKEN_DAYS", "30")))
# The API's caller (ugcsite.platform.http, which imports no app): the user id a bearer token names, and
# what every authenticated call records (activity: fan-out skips idle readers).
API_TOKEN_USER = "social.tokens.token_user_id"
API_CALLER_SEEN = "feeds.services.activity.user_seen"
# ...and what every read (GET) of the API counts against the read limits (below), on the data
# Redis (a feed read by a token that names its owner counts them in its page's script call).
API_READ_LIMIT = "social.limits.read_attempt"
# A read by a token that names its owner: the token's check and the read limits in one call.
API_SIGNED_READ = "social.limits.signed_read"
# Rate limits (docs/api.md, "Limits"; ugcsite.platform.ratelimits), each a count per minute, 0 turns it off:
# sign-ups and log-ins per client address (and log-ins per account); writes (boards created or
# edited, follows, invites) per user and per address. Counted on the cache's plain Redis.
RATE_LIMIT_AUTH_PER_MINUTE = int(os.environ.get("RATE_LIMIT_AUTH_PER_MINUTE", "30"))
RATE_LIMIT_WRITES_PER_MINUTE = int(os.environ.get("RATE_LIMIT_WRITES_PER_MINUTE", "120"))
RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_WRITES_PER_ADDRESS_PER_MINUTE", "600"))
# Reads (every GET of the API) per signed-in user and per client address: far above what a
# person or an honest client does (a page of cards makes 2-3), below what a scraper does.
RATE_LIMIT_READS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_READS_PER_MINUTE", "1200"))
RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_READS_PER_ADDRESS_PER_MINUTE", "12000"))
# Reports (feeds.services.reports): at most this many a minute per person; a board or person
# reported by REPORTS_AUTO_HIDE distinct people is hidden (suspended) until staff decide.
RATE_LIMIT_REPORTS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_REPORTS_PER_MINUTE", "10"))
REPORTS_AUTO_HIDE = int(os.environ.get("REPORTS_AUTO_HIDE", "5"))
# Comments (feeds.services.comments): at most this many a minute per person, on top of the
# write limits every comment counts against.
RATE_LIMIT_COMMENTS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_COMMENTS_PER_MINUTE", "20"))
# Mail: SMTP to EMAIL_HOST:EMAIL_PORT. `make run` and the tests start a local catcher that keeps
# each mail as a file in MAIL_DIR (scripts/mailcatcher.py; staff read it at /admin/mail/);
# production names its relay (and EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS).
EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
EMAIL_HOST = os.environ.get("EMAIL_HOST", "127.0.0.1")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", str(LOCAL_PORTS["MAIL_PORT"])))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = os.environ.get("EMAIL_USE_TLS", "0") == "1"
EMAIL_TIMEOUT = 5
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "ugcsite <no-reply@ugcsite.local>")
MAIL_DIR = os.environ.get("MAIL_DIR", "")
# A link that checks an address, and a password reset's link, work this long.
EMAIL_LINK_HOURS = int(os.environ.get("EMAIL_LINK_HOURS", "24"))
PASSWORD_RESET_TIMEOUT = EMAIL_LINK_HOURS * 3600
RATE_LIMIT_RESETS_PER_MINUTE = int(os.environ.get("RATE_LIMIT_RESETS_PER_MINUTE", "5"))
# "Take my data" (feeds.export): the zips are built under EXPORT_DIR by a worker and served from
# there by the web processes (so a site on several machines puts it on a shared volume), and
# deleted EXPORT_KEEP_HOURS after they are ready (beat, hourly).
EXPORT_DIR = os.environ.get("EXPORT_DIR", str(BASE_DIR / "var" / "exports"))
EXPORT_KEEP_HOURS = int(os.environ.get("EXPORT_KEEP_HOURS", "24"))
CELERY_BEAT_SCHEDULE["exports-expire"] = {"task": "feeds.tasks.exports_expire", "schedule": 3600.0}
CELERY_BEAT_SCHEDULE["accounts-erase-pending"] = {"task": "feeds.tasks.accounts_erase_pending", "schedule": 3600.0}
# Staff actions on the record (feeds.models.StaffAction) are kept this many days, then pruned by
# beat hourly; 0 (the default) keeps them for ever. Nothing else deletes one.
STAFF_ACTIONS_RETENTION_DAYS = int(os.environ.get("STAFF_ACTIONS_RETENTION_DAYS", "0"))
CELERY_BEAT_SCHEDULE["staff-actions-prune"] = {"task": "feeds.tasks.staff_actions_prune", "schedule": 3600.0}
# A deleted account's username is kept from others this long (social.models.RetiredUsername).
USERNAME_QUARANTINE_DAYS = int(os.environ.get("USERNAME_QUARANTINE_DAYS", "30"))
# The purge of a deleted account waits this long after its followers' walk was sent out.
ACCOUNT_PURGE_DELAY_SECONDS = int(os.environ.get("ACCOUNT_PURGE_DELAY_SECONDS", "30"))
RATE_LIMIT_STORAGE_URL = os.environ.get("RATE_LIMIT_STORAGE_URL", CACHES["default"]["LOCATION"])

# Board cache G: entries live this long after their last fill, so boards nobody reads leave Redis.
BOARD_CACHE_TTL_SECONDS = int(os.environ.get("BOARD_CACHE_TTL_SECONDS", str(7 * 24 * 3600)))
# Snowflake board ids: which of 32 id generators this process is (default: leased from Redis).
BOARD_ID_WORKER = os.environ.get("BOARD_ID_WORKER")

# The request header (as a META key) in which the proxy in front names the client's address,
# overwriting whatever a client sent: HTTP_X_REAL_IP behind scripts/serve.sh's nginx, which reaches
# the web server only through a Unix socket. Empty when clients connect to Django's server directly.
CLIENT_ADDRESS_HEADER = os.environ.get("CLIENT_ADDRESS_HEADER", "")

# Served over HTTPS (production's default): cookies only travel encrypted. `make run` serves plain
# HTTP on loopback with DEBUG off, so it sets SITE_HTTPS=0.
SITE_HTTPS = env_bool("SITE_HTTPS", not DEBUG)
SESSION_COOKIE_SECURE = SITE_HTTPS
CSRF_COOKIE_SECURE = SITE_HTTPS
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Behind HTTPS: plain HTTP is redirected (a proxy in front says which it was), and browsers are
# told to come back over HTTPS only, for a year (HSTS).
SECURE_SSL_REDIRECT = SITE_HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = 365 * 24 * 3600 if SITE_HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SITE_HTTPS
SECURE_HSTS_PRELOAD = SITE_HTTPS
# Argon2id first (new and re-hashed passwords); PBKDF2 still checks passwords stored before.
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]

# Production (DEBUG off) logs one JSON object a line (ugcsite.platform.logs: time, level, logger, message,
# the request's id, method, path and status); LOG_FORMAT=text or json chooses either way.
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text" if DEBUG else "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request": {"()": "ugcsite.platform.logs.RequestContextFilter"}},
    "formatters": {"json": {"()": "ugcsite.platform.logs.JsonFormatter"}, "text": {"format": "%(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["request"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
# Celery's processes log through the same handler (JSON in production) instead of their own format.
CELERY_WORKER_HIJACK_ROOT_LOGGER = DEBUG

# --- timelines and fan-out ---------------------------------------------------------------------
# P keeps the newest HOME_TIMELINE_HOT ids (Twitter kept 800); fan-out trims it back to that
# once it grows past HOT + SLACK, so a trim runs once per SLACK deliveries, not on every one.
HOME_TIMELINE_HOT = int(os.environ.get("HOME_TIMELINE_HOT", "800"))
HOME_TIMELINE_SLACK = int(os.environ.get("HOME_TIMELINE_SLACK", "200"))
# M keeps more: a profile is read deeper than a feed, and it grows only when its owner posts.
PROFILE_TIMELINE_HOT = int(os.environ.get("PROFILE_TIMELINE_HOT", "1000"))
# And by age: entries older than this leave the head too (whole chunks only).
HOME_TIMELINE_MAX_AGE = timedelta(days=int(os.environ.get("HOME_TIMELINE_MAX_AGE_DAYS", "30")))
PROFILE_TIMELINE_MAX_AGE = timedelta(days=int(os.environ.get("PROFILE_TIMELINE_MAX_AGE_DAYS", "365")))
# Ids a row of the archive holds (the seed's lists of 100). The slack must exceed one chunk, or
# fan-out would trim what the archiver has not taken yet.
TIMELINE_CHUNK = 100
ARCHIVE_INTERVAL_SECONDS = int(os.environ.get("ARCHIVE_INTERVAL_SECONDS", "30"))
# The outbox (feeds.timelines.outbox): a fan-out or retraction still pending this long after its change is
# sent again by beat (the broker was down or lost its queue): bounded, idempotent recovery.
OUTBOX_RESEND_AFTER_SECONDS = int(os.environ.get("OUTBOX_RESEND_AFTER_SECONDS", "60"))
CELERY_BEAT_SCHEDULE["outbox-resend"] = {
    "task": "feeds.tasks.outbox_resend",
    "schedule": float(os.environ.get("OUTBOX_RESEND_EVERY_SECONDS", "30")),
}
CELERY_BEAT_SCHEDULE["archive-timelines"] = {
    "task": "feeds.tasks.archive_run",
    "schedule": float(ARCHIVE_INTERVAL_SECONDS),
}
# Followers idle this long get no fan-out; the sweeper archives their P and drops it from Redis,
# and it is regenerated on their return.
IDLE_AFTER = timedelta(days=int(os.environ.get("IDLE_AFTER_DAYS", "14")))
IDLE_SWEEP_SECONDS = int(os.environ.get("IDLE_SWEEP_SECONDS", "3600"))
CELERY_BEAT_SCHEDULE["idle-sweep"] = {"task": "feeds.tasks.idle_sweep", "schedule": float(IDLE_SWEEP_SECONDS)}
# How often the last-seen index is copied to User.last_seen (a lost Redis loses at most this much
# activity; the copy reads only the users seen since the previous one).
ACTIVITY_FLUSH_SECONDS = int(os.environ.get("ACTIVITY_FLUSH_SECONDS", "60"))
CELERY_BEAT_SCHEDULE["last-seen-flush"] = {
    "task": "feeds.tasks.last_seen_flush",
    "schedule": float(ACTIVITY_FLUSH_SECONDS),
}
# On return, at most this many ids between the archive and the regenerated head are archived.
REGENERATE_GAP_MAX = int(os.environ.get("REGENERATE_GAP_MAX", "5000"))
# Followers reached per fan-out task; the task re-enqueues itself for the next batch. Each task
# costs a few milliseconds beside its deliveries (the board, the outbox row twice, the broker):
# `make bench-fanout` (100,000 followers, 2 worker processes) delivered 96,000/s in batches of
# 1,000, 165,000/s of 5,000 and 173,000/s of 10,000. A batch killed midway is written again whole.
FANOUT_BATCH_SIZE = int(os.environ.get("FANOUT_BATCH_SIZE", "5000"))
# Followers per Lua call inside a batch: big enough to amortise the call, small enough that
# one call holds Redis for well under a millisecond.
FANOUT_SCRIPT_CHUNK = int(os.environ.get("FANOUT_SCRIPT_CHUNK", "200"))
# How many of a followee's newest boards a new follow brings into the follower's feed.
FOLLOW_BACKFILL_COUNT = int(os.environ.get("FOLLOW_BACKFILL_COUNT", "100"))
# Hybrid fan-out (feeds.timelines.hybrid): an author with more followers than this is not pushed; each
# reader's feed page merges their M instead. The count is checked on every follow and unfollow.
FANOUT_PUSH_MAX_FOLLOWERS = int(os.environ.get("FANOUT_PUSH_MAX_FOLLOWERS", "10000"))
# When such an author falls back to the threshold, pushing starts again with the boards made this
# long after that moment (earlier ones stay merged): longer than any clock skew between the
# processes that make board ids, so no board made before the change is left in neither place.
FANOUT_PULL_MARGIN = timedelta(seconds=int(os.environ.get("FANOUT_PULL_MARGIN_SECONDS", "60")))
# Feed snapshots (feeds.timelines.snapshot): a feed page by offset at FEED_SNAPSHOT_FROM or deeper
# that the one script call cannot make keeps its merge and FEED_SNAPSHOT_AHEAD more ids (25 pages
# of 20), so the next deep pages are a range read; none longer than FEED_SNAPSHOT_MAX_IDS (16
# bytes an id: 160 KB), none kept longer than FEED_SNAPSHOT_SECONDS. Any change of the feed (a new
# board in it, a deletion, a follow) makes it stale at once.
FEED_SNAPSHOT_FROM = int(os.environ.get("FEED_SNAPSHOT_FROM", "200"))
FEED_SNAPSHOT_AHEAD = int(os.environ.get("FEED_SNAPSHOT_AHEAD", "500"))
FEED_SNAPSHOT_MAX_IDS = int(os.environ.get("FEED_SNAPSHOT_MAX_IDS", "10000"))
FEED_SNAPSHOT_SECONDS = int(os.environ.get("FEED_SNAPSHOT_SECONDS", "600"))

# --- discovery ----------------------------------------------------------------------------------
# A cached query intersection lives this long (ms); any index change makes it stale at once.
DISCOVERY_CACHE_MS = int(os.environ.get("DISCOVERY_CACHE_MS", "10000"))
# How often the trending order is rolled up from the hourly view counts, and views flushed.
TRENDING_ROLLUP_SECONDS = int(os.environ.get("TRENDING_ROLLUP_SECONDS", "60"))
VIEWS_FLUSH_SECONDS = int(os.environ.get("VIEWS_FLUSH_SECONDS", "30"))
CELERY_BEAT_SCHEDULE["trending-rollup"] = {
    "task": "feeds.discovery.tasks.trending_rollup",
    "schedule": float(TRENDING_ROLLUP_SECONDS),
}
CELERY_BEAT_SCHEDULE["views-flush"] = {
    "task": "feeds.discovery.tasks.views_flush",
    "schedule": float(VIEWS_FLUSH_SECONDS),
}
# Hourly view counts older than the trending window leave PostgreSQL (hourly).
CELERY_BEAT_SCHEDULE["view-history-prune"] = {"task": "feeds.discovery.tasks.view_history_prune", "schedule": 3600.0}

# --- social reading -----------------------------------------------------------------------------
# Reads count for "who of the people I follow read this" this long, then age out by themselves.
READ_RETENTION = timedelta(days=int(os.environ.get("READ_RETENTION_DAYS", "30")))
# Reads are buffered in Redis and written to PostgreSQL this often (a lost Redis loses at most
# this much reading); stored reads past the retention are pruned hourly.
READS_FLUSH_SECONDS = int(os.environ.get("READS_FLUSH_SECONDS", "30"))
CELERY_BEAT_SCHEDULE["reads-flush"] = {"task": "social.tasks.reads_flush", "schedule": float(READS_FLUSH_SECONDS)}
CELERY_BEAT_SCHEDULE["reads-prune"] = {"task": "social.tasks.reads_prune", "schedule": 3600.0}

# Shared boards, live (feeds.live): a board's ops reach PostgreSQL's doc this many seconds after
# the first one not yet there (beat looks as often), and at once when its last editor leaves;
# its live state in Redis expires this long after the last op. A beat's run compacts for at most
# LIVE_COMPACT_BUDGET seconds, the longest waiting first, so under load (a hundred big boards
# drawn at once) compaction takes a bounded share of a worker and each board waits its turn.
LIVE_COMPACT_SECONDS = float(os.environ.get("LIVE_COMPACT_SECONDS", "2"))
LIVE_COMPACT_BUDGET = float(os.environ.get("LIVE_COMPACT_BUDGET", str(LIVE_COMPACT_SECONDS / 4)))
LIVE_STATE_TTL_SECONDS = int(os.environ.get("LIVE_STATE_TTL_SECONDS", str(24 * 3600)))
CELERY_BEAT_SCHEDULE["live-compact"] = {"task": "feeds.live.tasks.live_compact_due", "schedule": LIVE_COMPACT_SECONDS}
# A board's versions (feeds.versions, docs/api.md "Versions"): a live board keeps one at most
# every VERSION_EVERY_SECONDS of drawing (and when its last editor leaves); every version is kept
# VERSIONS_KEEP_ALL_DAYS days, then only the last of each UTC day, pruned by beat hourly.
VERSION_EVERY_SECONDS = int(os.environ.get("VERSION_EVERY_SECONDS", "300"))
VERSIONS_KEEP_ALL_DAYS = int(os.environ.get("VERSIONS_KEEP_ALL_DAYS", "30"))
CELERY_BEAT_SCHEDULE["versions-prune"] = {"task": "feeds.tasks.versions_prune", "schedule": 3600.0}

# --- federation (feeds.federation; docs/federation.md) ------------------------------------------
# SITE_URL (above, beside ALLOWED_HOSTS) is the base of every ActivityPub id.
FEDERATION_ENABLED = env_bool("FEDERATION_ENABLED", True)
# Fetch from and deliver to private, loopback and link-local addresses: tests and local
# development only (a public server must not be made to reach its own network: SSRF).
FEDERATION_ALLOW_PRIVATE = env_bool("FEDERATION_ALLOW_PRIVATE", False)
# A board's picture (feeds.pictures, a PNG for link previews and federation) is rendered at once
# on its first change, then at most once more this many seconds later, of the version then, and
# when a live board's last editor leaves: a live board's compactions each rendered one (~0.2 s of
# a worker). /b/<id>.png renders a newer version itself, so previews are never stale.
PICTURE_RENDER_SECONDS = int(os.environ.get("PICTURE_RENDER_SECONDS", "300"))
# A live board's edits send Update at most this often (the last edit is sent when the time is up).
FEDERATION_UPDATE_SECONDS = int(os.environ.get("FEDERATION_UPDATE_SECONDS", "300"))
# Outgoing requests: each bounded in time (seconds), redirects followed and bytes read.
FEDERATION_FETCH_TIMEOUT = float(os.environ.get("FEDERATION_FETCH_TIMEOUT", "10"))
FEDERATION_MAX_REDIRECTS = int(os.environ.get("FEDERATION_MAX_REDIRECTS", "3"))
FEDERATION_MAX_FETCH_BYTES = int(os.environ.get("FEDERATION_MAX_FETCH_BYTES", str(1024 * 1024)))
# Incoming activities: bodies above this many bytes get 413; each remote host may post this many a
# minute (Mastodon's own inbox allows a busy server some hundreds).
FEDERATION_MAX_INBOX_BYTES = int(os.environ.get("FEDERATION_MAX_INBOX_BYTES", str(256 * 1024)))
RATE_LIMIT_INBOX_PER_HOST_PER_MINUTE = int(os.environ.get("RATE_LIMIT_INBOX_PER_HOST_PER_MINUTE", "600"))
# A cached remote actor older than this is fetched again when it is next needed (a signature that
# fails refetches it at once: key rotation).
FEDERATION_ACTOR_REFRESH_SECONDS = int(os.environ.get("FEDERATION_ACTOR_REFRESH_SECONDS", str(24 * 3600)))
# Deliveries, Mastodon's model: FEDERATION_DELIVERY_ATTEMPTS tries, the n-th retry after n^4 + 15
# seconds and some jitter (about 2 to 3 days in all); an inbox that fails
# FEDERATION_BREAKER_FAILURES times in a row is not tried for FEDERATION_BREAKER_SECONDS; a host
# that failed on FEDERATION_FAILURE_DAYS distinct days is skipped until a delivery succeeds.
FEDERATION_DELIVERY_ATTEMPTS = int(os.environ.get("FEDERATION_DELIVERY_ATTEMPTS", "16"))
FEDERATION_BREAKER_FAILURES = int(os.environ.get("FEDERATION_BREAKER_FAILURES", "10"))
FEDERATION_BREAKER_SECONDS = int(os.environ.get("FEDERATION_BREAKER_SECONDS", "60"))
FEDERATION_FAILURE_DAYS = int(os.environ.get("FEDERATION_FAILURE_DAYS", "7"))
# Remote inboxes written per walk task (the walk re-enqueues itself for the next batch).
FEDERATION_WALK_BATCH = int(os.environ.get("FEDERATION_WALK_BATCH", "1000"))
CELERY_BEAT_SCHEDULE["federation-resend"] = {
    "task": "feeds.federation.tasks.federation_resend",
    "schedule": float(os.environ.get("OUTBOX_RESEND_EVERY_SECONDS", "30")),
}
# Federation's tasks (deliveries to other servers, which may be slow) on a queue of their own when
# set, so that a worker given `-Q <it>` serves them apart from local fan-out (Mastodon's "push"
# queue); empty: the default queue, which the site's worker serves.
FEDERATION_QUEUE = os.environ.get("FEDERATION_QUEUE", "")
if FEDERATION_QUEUE:
    CELERY_TASK_ROUTES = {"feeds.federation.tasks.*": {"queue": FEDERATION_QUEUE}}
