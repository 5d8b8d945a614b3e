# PostgreSQL's streaming replica and its Patroni cluster (docs/operations.md, "Replica and
# failover"). Sourced after scripts/services.sh (say, die, as_pg, PG_BIN, apt_install) by
# scripts/run.sh (PG_REPLICAS=1, PG_HA=1) and the tests (ugcsite/tests/test_replica.py,
# test_failover.py). Only the engines' own tools: pg_basebackup, Patroni, etcd.

# pg_replica_start DATADIR PORT PRIMARY_PORT [fast]: a streaming standby of the primary on
# 127.0.0.1:PRIMARY_PORT, made once by pg_basebackup (-R: primary_conninfo and standby.signal)
# with a replication slot of its own, so the primary keeps the WAL it has not received; then
# started (hot_standby: it serves reads). Its data stays in DATADIR between runs.
pg_replica_start() {
    local data=$1 port=$2 primary_port=$3 fast=${4:-}
    local slot=ugcsite_replica_$port
    if [ ! -f "$data/PG_VERSION" ]; then
        say "Creating a streaming replica of :$primary_port in $data"
        mkdir -p "$data"
        if [ "$(id -u)" = 0 ]; then chown postgres: "$data"; fi
        chmod 700 "$data"
        as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$primary_port" -U ugcsite -d postgres -tAq -c \
            "SELECT 1 FROM pg_replication_slots WHERE slot_name = '$slot'" | grep -q 1 \
            || as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$primary_port" -U ugcsite -d postgres -tAq \
                -c "SELECT pg_create_physical_replication_slot('$slot')" >/dev/null
        as_pg "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U ugcsite -D "$data" \
            -X stream -R -S "$slot" --checkpoint=fast ${fast:+--no-sync} >"$data.basebackup.log" 2>&1 \
            || die "pg_basebackup from :$primary_port failed; see $data.basebackup.log"
    fi
    local opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$data' -c hot_standby=on"
    [ -n "$fast" ] && opts="$opts -c fsync=off -c full_page_writes=off"
    as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$data/server.log" -o "$opts" -w -t 60 start >/dev/null \
        || die "The replica did not start on port $port; see $data/server.log (is the port taken?)"
}

# pg_replica_drop PRIMARY_PORT REPLICA_PORT: the replica's slot off the primary (a replica thrown
# away must not keep the primary's WAL for ever).
pg_replica_drop() {
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$1" -U ugcsite -d postgres -tAq -c \
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'ugcsite_replica_$2'" \
        >/dev/null 2>&1 || true
}
