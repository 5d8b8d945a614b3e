#!/usr/bin/env bash
# make run: local PostgreSQL + Redis under var/, migrations, demo world on first run,
# then web + Celery worker + Celery beat until Ctrl-C, which stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
export PATH="$PWD/.venv/bin:$PATH"
export PORT=${PORT:-8000}

PG_DATA=$PWD/var/pg
REDIS_DIR=$PWD/var/redis
PG_PORT=${LOCAL_PG_PORT:-54320}
REDIS_PORT=${LOCAL_REDIS_PORT:-63790}
started_pg= started_redis=

cleanup() {
    trap - EXIT INT TERM
    [ -n "$started_redis" ] && { say "Stopping Redis"; redis_stop "$REDIS_DIR" "$REDIS_PORT"; }
    [ -n "$started_pg" ] && { say "Stopping PostgreSQL"; pg_stop "$PG_DATA"; }
}
trap cleanup EXIT INT TERM

mkdir -p var
if [ -z "${DATABASE_URL:-}" ]; then
    ensure_postgres
    pg_start "$PG_DATA" "$PG_PORT"; started_pg=1
    export DATABASE_URL="postgres://ugcsite@127.0.0.1:$PG_PORT/ugcsite"
fi
if [ -z "${REDIS_URL:-}" ]; then
    ensure_redis
    redis_start "$REDIS_DIR" "$REDIS_PORT"; started_redis=1
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
elif [ "${REDIS_CLUSTER:-}" = 1 ] && [ -z "${PLAIN_REDIS_URL:-}${CELERY_BROKER_URL:-}${CACHE_URL:-}" ]; then
    # The data Redis is a cluster; Celery's broker and Django's cache need a plain one: ours.
    ensure_redis
    redis_start "$REDIS_DIR" "$REDIS_PORT"; started_redis=1
    export PLAIN_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
    say "Data on the Redis Cluster at $REDIS_URL; Celery's broker and Django's cache on :$REDIS_PORT"
fi

say "Migrating"
python manage.py migrate --noinput

python manage.py seed_demo --if-empty
python manage.py rebuild_redis --if-empty   # a new or emptied data Redis is filled from PostgreSQL

say "Serving http://127.0.0.1:$PORT  (Ctrl-C stops the site, its worker, beat and the servers)"
honcho -f Procfile start || true
