#!/usr/bin/env bash
# make cluster / make cluster-stop: a local 3-primary Redis Cluster under var/cluster, for
# running the site on a cluster (REDIS_CLUSTER=1 REDIS_URL=redis://127.0.0.1:7001/0 make run).
# Its data is not kept on disk: make run rebuilds Redis from PostgreSQL when it finds it empty.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh

PORTS=(${LOCAL_CLUSTER_PORTS:-7001 7002 7003})
DIR=$PWD/var/cluster

case "${1:-start}" in
start)
    ensure_redis
    if redis-cli -p "${PORTS[0]}" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; then
        say "A Redis Cluster already answers on port ${PORTS[0]}"
    else
        rm -rf "$DIR"
        mkdir -p "$DIR"
        say "Starting a local Redis Cluster (3 primaries) on ports ${PORTS[*]} under var/cluster"
        redis_cluster_start "$DIR" 0 "${PORTS[@]}"
    fi
    say "Now: REDIS_CLUSTER=1 REDIS_URL=redis://127.0.0.1:${PORTS[0]}/0 make run   (make cluster-stop ends it)"
    ;;
stop)
    say "Stopping the local Redis Cluster on ports ${PORTS[*]}"
    redis_cluster_stop "$DIR" "${PORTS[@]}"
    ;;
*)
    die "usage: scripts/cluster.sh start|stop"
    ;;
esac
