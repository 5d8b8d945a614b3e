# Shell functions that install, start and stop the local PostgreSQL and Redis servers.
# Sourced by scripts/run.sh (make run) and scripts/test.sh (make test).

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf '\033[31merror:\033[0m %s\n' "$*" >&2; exit 1; }

# PostgreSQL refuses to run as root: as root, its commands run as the "postgres" user.
as_pg() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

find_pg_bin() {
    if [ -n "${PG_BIN:-}" ]; then echo "$PG_BIN"; return; fi
    local d
    for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r) /usr/local/pgsql/bin; do
        [ -x "$d/initdb" ] && { echo "$d"; return; }
    done
    command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return; }
    return 1
}

ensure_postgres() {
    if ! find_pg_bin >/dev/null && can_apt; then
        apt_install "PostgreSQL" postgresql
        # Debian starts a system-wide cluster on port 5432; ours run under var/ (and the tests' in /tmp).
        command -v systemctl >/dev/null 2>&1 && systemctl disable --now postgresql >/dev/null 2>&1 || true
        local cluster
        for cluster in $(pg_lsclusters -h 2>/dev/null | awk '$4 == "online" {print $1 "/" $2}'); do
            pg_ctlcluster "${cluster%/*}" "${cluster#*/}" stop >/dev/null 2>&1 || true
        done
    fi
    PG_BIN=$(find_pg_bin) || die "PostgreSQL server binaries (initdb, pg_ctl) were not found.
  On Debian/Ubuntu: sudo apt-get install postgresql   (any version from 13 up)
  On macOS:         brew install postgresql@15
  Or set PG_BIN to the folder holding initdb, or DATABASE_URL to a server you already run."
    export PG_BIN
    if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
        die "Running as root, but there is no 'postgres' user to run PostgreSQL as (it refuses root).
  Create one: useradd --system --home /var/lib/postgresql postgres"
    fi
}

can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; }

APT=(apt-get -o DPkg::Lock::Timeout=300 -qq)

# apt_update: the distribution's package lists, fetched once a run: UGC_APT_UPDATED, exported,
# tells the scripts and benchmarks this run starts that it is done. DPkg::Lock::Timeout does not
# cover the lists' own lock (apt-get update fails at once while another update holds it), so
# that is tried again every 5 s for up to 5 minutes.
apt_update() {
    [ -n "${UGC_APT_UPDATED:-}" ] && return
    local i err
    for i in $(seq 1 60); do
        err=$(DEBIAN_FRONTEND=noninteractive "${APT[@]}" update 2>&1 >/dev/null) \
            && { export UGC_APT_UPDATED=1; return; }
        [[ "$err" == *"Could not get lock"* ]] || break
        sleep 5
    done
    die "apt-get update failed: $err"
}

# apt_install WHAT PACKAGE...: from the distribution's packages, on lists fetched this run, waiting
# up to 5 minutes for another apt (a second set-up, unattended upgrades at boot) to let go of the
# dpkg lock.
apt_install() {
    local what=$1; shift
    say "Installing $what from the distribution's packages"
    apt_update
    DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y "$@" >/dev/null \
        || die "apt-get could not install $*; install it by hand and run again."
}

# nginx: the site's one port (scripts/serve.sh). Debian starts a system-wide one on port 80 when
# it installs it; ours runs under RUN_DIR, so that one is stopped.
ensure_nginx() {
    command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] && { export PATH="$PATH:/usr/sbin"; return; }
    if can_apt; then
        apt_install nginx nginx-light
        command -v systemctl >/dev/null 2>&1 && systemctl disable --now nginx >/dev/null 2>&1 || true
        [ -f /run/nginx.pid ] && kill "$(cat /run/nginx.pid)" 2>/dev/null || true
        export PATH="$PATH:/usr/sbin"
    else
        die "nginx was not found; the site is served through it.
  On Debian/Ubuntu: sudo apt-get install nginx-light
  On macOS:         brew install nginx"
    fi
}

ensure_redis() {
    command -v redis-server >/dev/null 2>&1 && return
    if can_apt; then
        apt_install "redis-server" redis-server
        # Debian starts a system-wide redis on port 6379; we run our own under var/.
        command -v systemctl >/dev/null 2>&1 && systemctl disable --now redis-server >/dev/null 2>&1 || true
    else
        die "redis-server was not found.
  On Debian/Ubuntu: sudo apt-get install redis-server
  On macOS:         brew install redis
  Or set REDIS_URL to a Redis you already run."
    fi
}

# A board's picture (feeds.pictures) is drawn by CairoSVG, which loads the distribution's libcairo.
ensure_cairo() {
    ldconfig -p 2>/dev/null | grep -q 'libcairo\.so\.2 ' && return
    [ -e /usr/lib/x86_64-linux-gnu/libcairo.so.2 ] || [ -e /usr/lib/aarch64-linux-gnu/libcairo.so.2 ] && return
    if can_apt; then
        apt_install "libcairo2 (boards' pictures)" libcairo2
    else
        die "libcairo was not found; boards' pictures (PNG) are drawn with it.
  On Debian/Ubuntu: sudo apt-get install libcairo2
  On macOS:         brew install cairo"
    fi
}

# The browser tests (pytest -m browser) drive the distribution's Chromium through Playwright;
# Playwright's own browser downloads are never used.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
ensure_chromium() {
    [ -x "$CHROMIUM" ] && return
    if can_apt; then
        apt_install "chromium (for the browser tests)" chromium
        [ -x "$CHROMIUM" ] || die "chromium was installed but $CHROMIUM is missing; set CHROMIUM to its path."
    else
        die "Chromium was not found at $CHROMIUM; the browser tests need it.
  On Debian/Ubuntu: sudo apt-get install chromium
  Or skip those tests: make test ARGS='-m \"not browser\"'"
    fi
}

# pg_start DATADIR PORT [fast]: create the cluster on first use, start it, create the ugcsite database.
# With "fast" the cluster skips fsync (test runs: data is thrown away).
pg_start() {
    local data=$1 port=$2 fast=${3:-}
    mkdir -p "$data"
    if [ "$(id -u)" = 0 ]; then chown postgres: "$data"; fi
    chmod 700 "$data"
    if [ ! -f "$data/PG_VERSION" ]; then
        say "Creating a PostgreSQL cluster in $data"
        as_pg "$PG_BIN/initdb" -D "$data" -U ugcsite --auth=trust --encoding=UTF8 --locale=C.UTF-8 \
            ${fast:+--no-sync} >"$data.initdb.log" 2>&1 \
            || die "initdb failed; see $data.initdb.log"
    fi
    local opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories='$data'"
    [ -n "$fast" ] && opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    opts="$opts ${PG_START_OPTS:-}"   # WAL archiving (scripts/pg-backup.sh)
    as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$data/server.log" -o "$opts" -w -t 60 start >/dev/null \
        || die "PostgreSQL did not start on port $port; see $data/server.log (is the port taken?)"
    as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U ugcsite -d postgres -tAq \
        -c "SELECT 1 FROM pg_database WHERE datname='ugcsite'" | grep -q 1 \
        || as_pg "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U ugcsite ugcsite
}

pg_stop() {
    local data=$1
    [ -f "$data/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
}

# redis_start DIR PORT [ephemeral]: a Redis kept under DIR (append-only file), or with no persistence.
# The append-only file is written before each answer leaves Redis and synced to disk every second:
# a killed redis-server loses nothing it answered, a machine that loses power at most ~1 s of writes.
redis_start() {
    local dir=$1 port=$2 ephemeral=${3:-}
    mkdir -p "$dir"
    local persist=(--appendonly yes --appendfsync everysec --save "300 1")
    [ -n "$ephemeral" ] && persist=(--appendonly no --save "")
    # Timelines stay compact listpacks up to P's cap (hot 800 + slack 200) and M's archive point
    # (hot 1000 + one chunk): about 21 bytes an entry instead of a skiplist's 120.
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --daemonize yes \
        --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" "${persist[@]}" \
        --zset-max-listpack-entries 1200 \
        || die "Redis did not start on port $port; see $dir/redis.log"
    local i
    for i in $(seq 1 50); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return
        sleep 0.1
    done
    die "Redis did not answer on port $port; see $dir/redis.log (is the port taken?)"
}

redis_stop() {
    local dir=$1 port=$2
    redis-cli -p "$port" shutdown >/dev/null 2>&1 || true
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# port_is_free PORT: nothing listens on 127.0.0.1:PORT.
port_is_free() {
    python3 -c 'import socket, sys; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", int(sys.argv[1])))' "$1" 2>/dev/null
}

# local_ports VAR_DIR NAME=DEFAULT...: set each NAME to its port for `make run`, chosen once per
# VAR_DIR and kept in VAR_DIR/ports.env: LOCAL_<NAME> when set, else the one kept, else DEFAULT
# when nothing listens there and no other var/ claims it, else a free port. Two clones (two var/)
# thus run side by side with only PORT set, and a clone keeps its ports from run to run. What
# each var/ holds is claimed in a file beside the lock (a var/ that is gone claims nothing), so a
# port whose server is not running (the replica's, Patroni's) is not given twice either. Call it
# holding ports_lock until the servers listen, so that two sites starting at once never collide.
local_ports() {
    local dir=$1 spec name default override port claims claimed
    shift
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd -P)
    claims=${TMPDIR:-/tmp}/ugcsite-ports.claimed
    touch "$claims"
    # the ports other var/ folders that still exist hold
    claimed=" $(while read -r port owner; do
        if [ "$owner" != "$dir" ] && [ -d "$owner" ]; then printf '%s ' "$port"; fi
    done < "$claims")"
    for spec in "$@"; do unset "${spec%%=*}"; done   # only what ports.env kept counts, not the environment
    [ -f "$dir/ports.env" ] && source "$dir/ports.env"
    : > "$dir/ports.env.new"
    for spec in "$@"; do
        name=${spec%%=*} default=${spec#*=} override=LOCAL_${spec%%=*}
        if [ -n "${!override:-}" ]; then
            port=${!override}
        elif [ -n "${!name:-}" ]; then
            port=${!name}   # kept from an earlier run
        elif [[ "$claimed" != *" $default "* ]] && port_is_free "$default"; then
            port=$default
        else
            port=$(free_port)
        fi
        printf -v "$name" '%s' "$port"
        claimed+="$port "
        echo "$name=$port" >> "$dir/ports.env.new"
    done
    mv "$dir/ports.env.new" "$dir/ports.env"
    {   # the claims of other var/ folders that still exist, then this one's
        while read -r port owner; do
            if [ "$owner" != "$dir" ] && [ -d "$owner" ]; then echo "$port $owner"; fi
        done < "$claims"
        sed "s|^[A-Z0-9_]*=\(.*\)|\1 $dir|" "$dir/ports.env"
    } > "$claims.new"
    mv "$claims.new" "$claims"
}

# ports_lock: held (until ports_unlock, or the script's end) while a site chooses its ports and
# starts its servers on them.
ports_lock() {
    exec {UGC_PORTS_LOCK}>"${TMPDIR:-/tmp}/ugcsite-ports.lock"
    flock "$UGC_PORTS_LOCK"
}
ports_unlock() { flock -u "$UGC_PORTS_LOCK"; }

# free_ports N [EXCLUDE...]: N distinct free ports (held open together while chosen), none of
# them in EXCLUDE, on one line separated by spaces.
free_ports() {
    python3 - "$@" <<'PY'
import socket, sys
n, exclude = int(sys.argv[1]), set(sys.argv[2:])
held, ports = [], []
while len(ports) < n:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
    port = s.getsockname()[1]
    if str(port) not in exclude:
        ports.append(port)
print(*ports)
PY
}

# redis_cluster_start DIR REPLICAS PORT...: a throwaway Redis Cluster (no AOF, no RDB) of one
# node per PORT, each under DIR/PORT with its own nodes.conf and log, created by redis-cli with
# REPLICAS replicas per primary (3 ports and 0, or 6 ports and 1: three primaries either way).
# Each node's cluster bus gets a free port of its own (--cluster-port) rather than PORT+10000,
# which is past 65535 for the high ports free_port hands out. REDIS_CLUSTER_NODE_TIMEOUT (ms,
# default 5000) is how long a silent node has before its replica takes over: the failover test
# sets 1000 so that a failover completes in a few seconds.
redis_cluster_start() {
    local dir=$1 replicas=$2; shift 2
    local ports=("$@") n=$# node_timeout=${REDIS_CLUSTER_NODE_TIMEOUT:-5000}
    [[ "$node_timeout" =~ ^[1-9][0-9]*$ ]] \
        || die "redis_cluster_start: REDIS_CLUSTER_NODE_TIMEOUT must be milliseconds (a positive integer), not '$node_timeout'"
    [ "$n" -ge 3 ] && [ $((n % (replicas + 1))) -eq 0 ] && [ $((n / (replicas + 1))) -ge 3 ] \
        || die "redis_cluster_start: $n ports cannot make at least 3 primaries with $replicas replicas each"
    local bus=($(free_ports "$n" "${ports[@]}"))
    local i port node addrs=()
    for i in "${!ports[@]}"; do
        port=${ports[$i]} node="$dir/${ports[$i]}"
        mkdir -p "$node"
        redis-server --port "$port" --bind 127.0.0.1 --dir "$node" --daemonize yes \
            --pidfile "$node/redis.pid" --logfile "$node/redis.log" --appendonly no --save "" \
            --zset-max-listpack-entries 1200 \
            --cluster-enabled yes --cluster-config-file nodes.conf --cluster-port "${bus[$i]}" \
            --cluster-node-timeout "$node_timeout" \
            || die "Redis cluster node did not start on port $port; see $node/redis.log"
        addrs+=("127.0.0.1:$port")
    done
    # A node counts once it answers from its own directory (not some other server on the port).
    for port in "${ports[@]}"; do
        for i in $(seq 1 50); do
            redis-cli -p "$port" config get dir 2>/dev/null | grep -qxF "$(cd "$dir/$port" && pwd -P)" && continue 2
            sleep 0.1
        done
        die "Redis cluster node did not answer on port $port; see $dir/$port/redis.log (is the port taken?)"
    done
    redis-cli --cluster create "${addrs[@]}" --cluster-replicas "$replicas" --cluster-yes \
        >"$dir/cluster-create.log" 2>&1 \
        || die "redis-cli --cluster create failed; see $dir/cluster-create.log"
    # Ready: every node says cluster_state:ok and already sees every replica (gossip spreads the
    # replicas' roles a little after redis-cli returns), and every replica's link to its primary is up.
    local want_replicas=$((n - n / (replicas + 1)))
    for port in "${ports[@]}"; do
        for i in $(seq 1 150); do
            if redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' \
                && [ "$(redis-cli -p "$port" cluster nodes 2>/dev/null | awk '$3 ~ /slave/' | wc -l)" -eq "$want_replicas" ] \
                && ! redis-cli -p "$port" info replication 2>/dev/null | grep -q '^master_link_status:down'; then
                continue 2
            fi
            sleep 0.1
        done
        die "Redis cluster node on port $port was not ready in 15 s (cluster_state:ok, $want_replicas replicas, links up); see $dir/$port/redis.log and $dir/cluster-create.log"
    done
}

# redis_cluster_stop DIR PORT...: shut every node down and wait until its process has exited.
redis_cluster_stop() {
    local dir=$1; shift
    local port pid i
    for port in "$@"; do
        pid=$(cat "$dir/$port/redis.pid" 2>/dev/null || true)
        redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
        [ -n "$pid" ] || continue
        for i in $(seq 1 50); do
            # Gone, or a zombie waiting for init to reap it (a daemonized server's parent is init).
            case "$(ps -o stat= -p "$pid" 2>/dev/null)" in ''|Z*) continue 2 ;; esac
            sleep 0.1
        done
        [ "$(ps -o comm= -p "$pid" 2>/dev/null)" = redis-server ] && kill "$pid" 2>/dev/null || true
    done
}

# mail_start DIR PORT: the local SMTP server that keeps mail as files in DIR
# (scripts/mailcatcher.py); mail_stop DIR stops it.
mail_start() {
    local dir=$1 port=$2
    mkdir -p "$dir"
    python scripts/mailcatcher.py --port "$port" --dir "$dir" > "$dir/.catcher.log" 2>&1 &
    echo $! > "$dir/.catcher.pid"
    local i
    for i in $(seq 1 50); do
        grep -q "mail catcher on" "$dir/.catcher.log" 2>/dev/null && return
        sleep 0.1
    done
    die "The mail catcher did not start on port $port; see $dir/.catcher.log"
}

mail_stop() {
    local dir=$1
    [ -s "$dir/.catcher.pid" ] && kill "$(cat "$dir/.catcher.pid")" 2>/dev/null || true
    rm -f "$dir/.catcher.pid"
}
