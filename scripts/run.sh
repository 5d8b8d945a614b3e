#!/usr/bin/env bash
# make run: local PostgreSQL + Redis (data) + Redis (broker and cache) under var/, migrations,
# demo world on first run, then the site's processes (scripts/serve.sh: nginx, the web and live
# servers, Celery worker and beat under supervisord; a process that dies is started again) until
# Ctrl-C, which stops all of it. DEBUG is off unless
# DJANGO_DEBUG=1: errors show the site's own pages.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
source scripts/pg-ha.sh
source scripts/pg-backup.sh
export PATH="$PWD/.venv/bin:$PATH"
export PORT=${PORT:-8000}
VAR=${UGC_VAR:-$PWD/var}   # what make run keeps: the servers' data, the secret key, the ports

PG_DATA=$VAR/pg
REDIS_DIR=$VAR/redis
BROKER_DIR=$VAR/redis-broker
MAIL_DIR_LOCAL=$VAR/mail
REPLICA_DATA=$VAR/pg-replica
HA_DIR=$VAR/pg-ha   # PG_HA=1: etcd, Patroni nodes n1 and n2 (scripts/pg-ha.sh)
started_pg= started_redis= started_broker= started_mail= started_replica= started_ha=
# Each server's port: chosen once per var/ and kept in var/ports.env (scripts/ports.env's when
# free, else a free port; LOCAL_PG_PORT and the like choose one), so that a second clone runs
# beside this one with only PORT set. Held under a lock until the servers listen.
ports_lock
local_ports "$VAR" $(grep -v '^#' scripts/ports.env)
HA_PORTS=("$ETCD_CLIENT_PORT" "$ETCD_PEER_PORT" "$HA1_PG_PORT" "$HA1_REST_PORT" "$HA2_PG_PORT" "$HA2_REST_PORT")

cleanup() {
    trap - EXIT INT TERM
    [ -n "$started_broker" ] && { say "Stopping the broker's Redis"; redis_stop "$BROKER_DIR" "$BROKER_PORT"; }
    [ -n "$started_redis" ] && { say "Stopping Redis"; redis_stop "$REDIS_DIR" "$REDIS_PORT"; }
    [ -n "$started_mail" ] && { say "Stopping the mail catcher"; mail_stop "$MAIL_DIR_LOCAL"; }
    [ -n "$started_replica" ] && { say "Stopping the replica"; pg_stop "$REPLICA_DATA"; }
    [ -n "$started_pg" ] && { say "Stopping PostgreSQL"; pg_stop "$PG_DATA"; }
    [ -n "$started_ha" ] && { say "Stopping the Patroni cluster"; pg_ha_stop "$HA_DIR"; }
}
trap cleanup EXIT INT TERM

mkdir -p "$VAR"
if [ -z "${DATABASE_URL:-}" ] && [ "${PG_HA:-0}" = 1 ]; then
    ensure_postgres
    started_ha=1; pg_ha_start "$HA_DIR" "${HA_PORTS[@]}"
    export DATABASE_URL="postgres://ugcsite@127.0.0.1:${HA_PORTS[2]},127.0.0.1:${HA_PORTS[4]}/ugcsite?target_session_attrs=read-write&connect_timeout=3"
fi
if [ -z "${DATABASE_URL:-}" ]; then
    ensure_postgres
    pg_backup_prepare "$PG_DATA" "$PG_PORT"   # WAL archive and backups (PG_BACKUP=0: none)
    pg_start "$PG_DATA" "$PG_PORT"; started_pg=1
    pg_backup_started background
    export DATABASE_URL="postgres://ugcsite@127.0.0.1:$PG_PORT/ugcsite"
    if [ "${PG_REPLICAS:-0}" = 1 ]; then  # a streaming standby for lag-tolerant reads
        pg_replica_start "$REPLICA_DATA" "$REPLICA_PORT" "$PG_PORT"; started_replica=1
        export DATABASE_REPLICA_URL="postgres://ugcsite@127.0.0.1:$REPLICA_PORT/ugcsite"
    elif [ -d "$REPLICA_DATA" ]; then
        pg_replica_drop "$PG_PORT" "$REPLICA_PORT"  # its slot would keep the primary's WAL for ever
    fi
fi
ensure_cairo   # boards' pictures (feeds.pictures)
if [ -z "${REDIS_URL:-}" ]; then
    ensure_redis
    redis_start "$REDIS_DIR" "$REDIS_PORT"; started_redis=1
    export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
fi
if [ -z "${PLAIN_REDIS_URL:-}${CELERY_BROKER_URL:-}${CACHE_URL:-}" ]; then
    # Celery's broker and Django's cache on a Redis of their own: losing or flushing the data
    # Redis loses no queued task, and a data Redis on a cluster is possible (neither can use one).
    ensure_redis
    redis_start "$BROKER_DIR" "$BROKER_PORT"; started_broker=1
    export PLAIN_REDIS_URL="redis://127.0.0.1:$BROKER_PORT/0"
fi
if [ -z "${EMAIL_HOST:-}" ]; then
    # Mail (password resets, address checks) goes to a local catcher that keeps it under
    # var/mail; staff read it at /admin/mail/. Set EMAIL_HOST (and EMAIL_PORT) for a real relay.
    mail_start "$MAIL_DIR_LOCAL" "$MAIL_PORT"; started_mail=1
    export EMAIL_PORT=$MAIL_PORT MAIL_DIR=$MAIL_DIR_LOCAL
fi
ports_unlock
[ "${REDIS_CLUSTER:-}" = 1 ] && say "Data on the Redis Cluster at $REDIS_URL; Celery's broker and Django's cache on ${PLAIN_REDIS_URL:-their own URLs}"

# Production-like by default: no debug pages; served over plain HTTP on loopback, so the
# cookies are not marked Secure. The secret key is made once and kept in var/.
export DJANGO_DEBUG=${DJANGO_DEBUG:-0}
export SITE_HTTPS=${SITE_HTTPS:-0}
if [ -z "${DJANGO_SECRET_KEY:-}" ]; then
    [ -s "$VAR/secret_key" ] || python -c 'import secrets; print(secrets.token_urlsafe(50))' > "$VAR/secret_key"
    export DJANGO_SECRET_KEY=$(cat "$VAR/secret_key")
fi
export RUN_DIR=$VAR/run
export EXPORT_DIR=${EXPORT_DIR:-$VAR/exports}

say "Migrating"
python manage.py migrate --noinput
[ "$DJANGO_DEBUG" = 1 ] || python manage.py collectstatic --noinput -v 0

python manage.py seed_demo --if-empty
python manage.py rebuild_redis --if-empty   # a new or emptied data Redis is filled from PostgreSQL

say "Serving http://127.0.0.1:$PORT  (Ctrl-C stops the site, its worker, beat and the servers)"
scripts/serve.sh || true
