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
    if [ -f "$data/PG_VERSION" ] && ! as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$primary_port" -U ugcsite -d postgres -tAq \
        -c "SELECT 1 FROM pg_replication_slots WHERE slot_name = '$slot'" | grep -q 1; then
        # Its slot was dropped (a make run without PG_REPLICAS): the WAL it needs may be gone.
        say "The replica in $data lost its slot on the primary; making it again"
        rm -rf "$data"
    fi
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

# pg_replica_drop PRIMARY_PORT REPLICA_PORT: the replica's slot off the primary (a replica not
# started must not keep the primary's WAL for ever; make run without PG_REPLICAS drops it).
pg_replica_drop() {
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$1" -U ugcsite -d postgres -tAq -c \
        "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'ugcsite_replica_$2'" \
        >/dev/null 2>&1 || true
}

# --- the Patroni cluster (PG_HA=1): etcd, a primary and a synchronous standby -------------------

ensure_patroni() {
    command -v patroni >/dev/null 2>&1 && command -v etcd >/dev/null 2>&1 && return
    if can_apt; then
        apt_install "Patroni and etcd" patroni etcd-server
        # Debian enables system-wide services of both; ours run as the postgres user under var/.
        command -v systemctl >/dev/null 2>&1 && systemctl disable --now etcd patroni >/dev/null 2>&1 || true
    else
        die "patroni and etcd were not found; PG_HA=1 runs the database as a Patroni cluster.
  On Debian/Ubuntu: sudo apt-get install patroni etcd-server"
    fi
}

# rest_get URL: the body of a 200 answer, or exit status 1 (any other answer, or none in 2 s).
rest_get() {
    python3 -c 'import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=2).read().decode())
except Exception:
    sys.exit(1)' "$1"
}

# pg_ha_own DIR: DIR made, owned by postgres (as root), mode 0700.
pg_ha_own() {
    mkdir -p "$1"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$1"; fi
    chmod 700 "$1"
}

# etcd_start DIR CLIENT_PORT PEER_PORT: a one-member etcd 3.4 on loopback, its data in DIR/data,
# its pid in DIR/etcd.pid (the process itself: the shell that writes it execs etcd).
etcd_start() {
    local dir=$1 port=$2 peer=$3 i
    pg_ha_own "$dir"
    as_pg setsid bash -c 'echo $$ > "$1/etcd.pid"; exec etcd --name ugcsite --data-dir "$1/data" \
        --listen-client-urls "http://127.0.0.1:$2" --advertise-client-urls "http://127.0.0.1:$2" \
        --listen-peer-urls "http://127.0.0.1:$3" --initial-advertise-peer-urls "http://127.0.0.1:$3" \
        --initial-cluster "ugcsite=http://127.0.0.1:$3" >"$1/etcd.log" 2>&1' _ "$dir" "$port" "$peer" \
        </dev/null >/dev/null 2>&1 &
    for i in $(seq 1 100); do
        rest_get "http://127.0.0.1:$port/health" 2>/dev/null | grep -q '"health":"true"' && return
        sleep 0.1
    done
    die "etcd did not answer on port $port; see $dir/etcd.log (is the port taken?)"
}

# stop_pid_file FILE: TERM the process named in FILE, wait up to 30 s for it to end, then KILL it.
stop_pid_file() {
    local pid i
    pid=$(cat "$1" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
    for i in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$1"; return 0; }
        sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
    rm -f "$1"
}

# patroni_start DIR NAME PG_PORT API_PORT ETCD_PORT: one Patroni node (its YAML written on first
# use), its PostgreSQL's data in DIR/data, its pid in DIR/patroni.pid. The first node to start
# bootstraps the cluster (initdb with checksums); the next one is made a standby by Patroni
# (pg_basebackup) and, with synchronous_mode, the synchronous one. Patroni starts, promotes,
# demotes and rewinds PostgreSQL itself.
#   ttl 20, loop_wait 2, retry_timeout 5 (loop_wait + 2 x retry_timeout <= ttl): a primary
#   gone for good is replaced once its leader key expires, at most ttl + loop_wait later.
#   synchronous_mode (not strict): a commit is acknowledged once the synchronous standby has
#   flushed it, and only that standby may be promoted; with the standby gone, writes go on,
#   unprotected, rather than stop.
patroni_start() {
    local dir=$1 name=$2 pg_port=$3 api_port=$4 etcd_port=$5
    pg_ha_own "$dir"
    [ -f "$dir/patroni.yml" ] || cat >"$dir/patroni.yml" <<YAML
scope: ugcsite
name: $name
restapi:
  listen: 127.0.0.1:$api_port
  connect_address: 127.0.0.1:$api_port
etcd3:
  hosts: 127.0.0.1:$etcd_port
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 5
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        synchronous_commit: "on"
        wal_log_hints: "on"
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $dir/data
  bin_dir: $PG_BIN
  pgpass: $dir/pgpass
  authentication:
    superuser: {username: ugcsite, password: ugcsite}
    replication: {username: replicator, password: replicator}
    rewind: {username: rewinder, password: rewinder}
  parameters:
    unix_socket_directories: '$dir'
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
YAML
    if [ "$(id -u)" = 0 ]; then chown postgres: "$dir/patroni.yml"; fi
    as_pg setsid bash -c 'echo $$ > "$1/patroni.pid"; exec patroni "$1/patroni.yml" >>"$1/patroni.log" 2>&1' _ "$dir" \
        </dev/null >/dev/null 2>&1 &
}

# patroni_stop DIR: stop the node (Patroni stops its PostgreSQL first).
patroni_stop() {
    stop_pid_file "$1/patroni.pid"
    # A Patroni killed earlier (kill -9) leaves its PostgreSQL to us.
    [ -f "$1/data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null 2>&1 || true
}

# pg_ha_wait API_PORT ROLE [SECONDS]: until the node's REST API says ROLE (primary, or
# sync_standby: a standby streaming in sync).
pg_ha_wait() {
    local port=$1 role=$2 seconds=${3:-120} i
    for i in $(seq 1 $((seconds * 5))); do
        case $role in
            primary) rest_get "http://127.0.0.1:$port/primary" >/dev/null 2>&1 && return ;;
            sync_standby) rest_get "http://127.0.0.1:$port/sync" >/dev/null 2>&1 && return ;;
        esac
        sleep 0.2
    done
    die "The Patroni node on :$port was not $role after $seconds s; see its patroni.log"
}

# pg_ha_start DIR ETCD_PORT ETCD_PEER_PORT PG1 API1 PG2 API2: etcd and two Patroni nodes under DIR
# (etcd, n1, n2); returns once one is the primary, the other its synchronous standby, and the
# ugcsite database exists. The site finds the primary by itself:
#   DATABASE_URL=postgres://ugcsite@127.0.0.1:PG1,127.0.0.1:PG2/ugcsite?target_session_attrs=read-write
pg_ha_start() {
    local dir=$1 etcd_port=$2 etcd_peer=$3 pg1=$4 api1=$5 pg2=$6 api2=$7
    ensure_patroni
    pg_ha_own "$dir"
    say "Starting etcd on :$etcd_port and Patroni nodes on :$pg1 (REST :$api1) and :$pg2 (REST :$api2) under $dir"
    etcd_start "$dir/etcd" "$etcd_port" "$etcd_peer"
    patroni_start "$dir/n1" n1 "$pg1" "$api1" "$etcd_port"
    patroni_start "$dir/n2" n2 "$pg2" "$api2" "$etcd_port"
    local leader
    for leader in $(seq 1 600); do
        rest_get "http://127.0.0.1:$api1/primary" >/dev/null 2>&1 && { leader=$pg1; break; }
        rest_get "http://127.0.0.1:$api2/primary" >/dev/null 2>&1 && { leader=$pg2; break; }
        sleep 0.2
    done
    [ "$leader" = "$pg1" ] || [ "$leader" = "$pg2" ] || die "No Patroni node became the primary in 120 s; see $dir/n*/patroni.log"
    if [ "$leader" = "$pg1" ]; then pg_ha_wait "$api2" sync_standby; else pg_ha_wait "$api1" sync_standby; fi
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$leader" -U ugcsite -d postgres -tAq \
        -c "SELECT 1 FROM pg_database WHERE datname='ugcsite'" | grep -q 1 \
        || as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$leader" -U ugcsite ugcsite
}

# pg_ha_stop DIR: both nodes, then etcd.
pg_ha_stop() {
    local dir=$1
    patroni_stop "$dir/n2"
    patroni_stop "$dir/n1"
    stop_pid_file "$dir/etcd/etcd.pid"
}
