#!/usr/bin/env bash
# with-servers.sh CMD...: run CMD against a throwaway PostgreSQL and Redis on free ports, then
# stop both and delete their data. Used by `make test` and the benchmarks; never touches var/.
# With UGC_CLUSTER=1 (make test-cluster) the data Redis is a throwaway 3-primary Redis Cluster
# instead (REDIS_CLUSTER=1, REDIS_URL names its first node, REDIS_CLUSTER_PORTS lists every
# node); Celery's broker and Django's cache stay on the plain throwaway Redis.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
source scripts/pg-ha.sh
export PATH="$PWD/.venv/bin:$PATH"

ensure_postgres
ensure_redis
ensure_cairo
# The browser tests need Chromium; benchmarks and runs with -m "not browser" do not.
if [ "${1:-}" = pytest ] && { [[ "$*" != *"not browser"* ]] || [[ "$*" == *"or cluster"* ]]; }; then ensure_chromium; fi
# The failover test (ugcsite/tests/test_failover.py) starts a Patroni cluster of its own.
if [ "${1:-}" = pytest ]; then ensure_patroni; fi
TMP=$(mktemp -d /tmp/ugcsite-run.XXXXXX)
chmod 755 "$TMP"
PG_PORT=$(free_port); REDIS_PORT=$(free_port)
CLUSTER_PORTS=()
cleanup() {
    trap - EXIT INT TERM
    if [ ${#CLUSTER_PORTS[@]} -gt 0 ]; then redis_cluster_stop "$TMP/cluster" "${CLUSTER_PORTS[@]}"; fi
    redis_stop "$TMP/redis" "$REDIS_PORT"
    mail_stop "$TMP/mail"
    pg_stop "$TMP/pg"
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

say "Starting throwaway PostgreSQL on :$PG_PORT and Redis on :$REDIS_PORT"
pg_start "$TMP/pg" "$PG_PORT" fast
redis_start "$TMP/redis" "$REDIS_PORT" ephemeral
MAIL_PORT=$(free_port)
mail_start "$TMP/mail" "$MAIL_PORT"
export EMAIL_PORT=$MAIL_PORT MAIL_DIR=$TMP/mail

export DATABASE_URL="postgres://ugcsite@127.0.0.1:$PG_PORT/ugcsite"
export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
export CELERY_BROKER_URL="redis://127.0.0.1:$REDIS_PORT/14"
export CACHE_URL="redis://127.0.0.1:$REDIS_PORT/15"
export CHANNEL_LAYER_URL="redis://127.0.0.1:$REDIS_PORT/13"
export REDIS_PORT
if [ "${UGC_CLUSTER:-}" = 1 ]; then
    CLUSTER_PORTS=($(free_ports 3 "$PG_PORT" "$REDIS_PORT"))
    say "Starting a throwaway Redis Cluster (3 primaries, no replicas) on ports ${CLUSTER_PORTS[*]}"
    redis_cluster_start "$TMP/cluster" 0 "${CLUSTER_PORTS[@]}"
    export REDIS_CLUSTER=1
    # redis-py's RedisCluster.from_url accepts db 0 in the path (any other db is refused).
    export REDIS_URL="redis://127.0.0.1:${CLUSTER_PORTS[0]}/0"
    export REDIS_CLUSTER_PORTS="${CLUSTER_PORTS[*]}"
fi
export DJANGO_SETTINGS_MODULE=ugcsite.settings
set +e
"$@"
status=$?
set -e
exit $status
