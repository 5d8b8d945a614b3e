#!/usr/bin/env bash
# PostgreSQL's backups and WAL archive (pgBackRest), and restoring to a point in time.
#
# Sourced by scripts/run.sh (make run archives every WAL segment and takes the first full backup);
# run by make backup, make backups and make restore, and by the Celery task of beat's schedule
# (ugcsite/backups.py):
#     scripts/pg-backup.sh backup [full|diff|incr]   take one now (default full), print what it took
#     scripts/pg-backup.sh list                      every backup, its sizes and time range
#     scripts/pg-backup.sh restore TARGET            "2026-12-01 10:15:00+00" or latest
#     scripts/pg-backup.sh start | stop              the cluster alone, archiving (the tests use it)
#
# Settings (environment; the defaults are make run's):
#   PG_BACKUP_REPO     where backups and WAL go: a folder (default var/pgbackrest/repo), e.g. another
#                      disk, or an S3-compatible store: s3://KEY:SECRET@HOST[:PORT]/BUCKET/PATH?region=R
#   PG_BACKUP_KEEP_FULL  full backups kept (4; the WAL an expired backup needed goes with it)
#   PG_BACKUP=0        no archiving and no backups (the default is on)
#   PG_DATA, PG_PORT, PG_BACKUP_DIR  the cluster and pgBackRest's config, logs, locks, spool
#                      (var/pg, the port make run chose (var/ports.env), var/pgbackrest)
# pgBackRest always runs as the cluster's owner with --config= and its paths under PG_BACKUP_DIR:
# nothing under /etc, /var or /tmp (docs/operations.md, "Backups, restore and failover").

PG_BACKUP_STANZA=ugcsite
PG_ARCHIVE_TIMEOUT=${PG_ARCHIVE_TIMEOUT:-60}   # the most an idle site's last commits wait to be archived (RPO)

ensure_pgbackrest() {
    command -v pgbackrest >/dev/null 2>&1 && return
    if can_apt; then
        apt_install "pgbackrest (PostgreSQL's backups)" pgbackrest
    else
        die "pgbackrest was not found; make run keeps PostgreSQL's backups and WAL archive with it.
  On Debian/Ubuntu: sudo apt-get install pgbackrest
  On macOS:         brew install pgbackrest
  Or run without backups: PG_BACKUP=0 make run"
    fi
}

# pg_backup_prepare DATA PORT: pgBackRest's config for the cluster in DATA on PORT, and the
# options that make pg_start archive (PG_START_OPTS). Exports PG_BACKUP_CONFIG for beat's task.
pg_backup_prepare() {
    [ "${PG_BACKUP:-1}" = 0 ] && return
    export PG_DATA=$1 PG_PORT=$2
    export PG_BACKUP_DIR=${PG_BACKUP_DIR:-${VAR:-$PWD/var}/pgbackrest}
    ensure_pgbackrest
    mkdir -p "$PG_BACKUP_DIR"/{lock,log,spool,tmp}
    [ -n "${PG_BACKUP_REPO:-}" ] || mkdir -p "$PG_BACKUP_DIR/repo"
    export PG_BACKUP_CONFIG=$PG_BACKUP_DIR/pgbackrest.conf
    python3 scripts/pgbackrest_info.py conf > "$PG_BACKUP_CONFIG.new" || die "PG_BACKUP_REPO is not usable (above)."
    mv "$PG_BACKUP_CONFIG.new" "$PG_BACKUP_CONFIG"
    chmod 600 "$PG_BACKUP_CONFIG"   # it may hold the S3 store's key
    if [ "$(id -u)" = 0 ]; then chown -R postgres: "$PG_BACKUP_DIR"; fi
    PG_START_OPTS="-c wal_level=replica -c archive_mode=on -c archive_timeout=$PG_ARCHIVE_TIMEOUT"
    PG_START_OPTS+=" -c archive_command='pgbackrest --config=$PG_BACKUP_CONFIG --stanza=$PG_BACKUP_STANZA archive-push %p'"
    export PG_START_OPTS
}

pgbr() {
    as_pg pgbackrest --config="$PG_BACKUP_CONFIG" --stanza="$PG_BACKUP_STANZA" "$@"
}

pgbr_info_json() { pgbr info --output=json; }

# pgbr_progress PATTERN: the lines of pgBackRest's console log that say how far it got (and its
# errors), as they come; never fails (the caller's pipefail reports pgBackRest's own status).
pgbr_progress() {
    grep -E --line-buffered "$1|ERROR|WARN" | grep -v --line-buffered 'special file' || true
}

# pg_backup_started [background]: after pg_start. The stanza (once), then the first full backup
# when the repository has none: in the background for make run, which then starts as fast as before.
pg_backup_started() {
    [ "${PG_BACKUP:-1}" = 0 ] && return
    local out
    out=$(pgbr stanza-create 2>&1) || die "pgBackRest could not set up its repository (${PG_BACKUP_REPO:-$PG_BACKUP_DIR/repo}):
$out
  When it says the repository belongs to another database (var/pg was made anew), move the old
  repository aside (mv $PG_BACKUP_DIR/repo $PG_BACKUP_DIR/repo.old) or set PG_BACKUP_REPO to an
  empty place, and run again. PG_BACKUP=0 runs without backups."
    [ -z "$(pgbr_info_json | python3 scripts/pgbackrest_info.py oldest)" ] || return 0
    if [ "${1:-}" = background ]; then
        say "Taking the first full backup in the background (log: $PG_BACKUP_DIR/first-backup.log)"
        (pgbr backup --type=full >"$PG_BACKUP_DIR/first-backup.log" 2>&1 &)
    else
        pg_backup_take full
    fi
}

# pg_backup_take TYPE: a backup now (the cluster must be running), then one line saying what it took.
pg_backup_take() {
    local type=${1:-full}
    case "$type" in full|diff|incr) ;; *) die "A backup is full, diff or incr, not '$type' (make backup TYPE=diff)." ;; esac
    say "Taking a $type backup of PostgreSQL (pgBackRest, repository ${PG_BACKUP_REPO:-$PG_BACKUP_DIR/repo})"
    local start=$SECONDS
    local status=0
    pgbr backup --type="$type" --log-level-console=info 2>&1 \
        | pgbr_progress 'backup (start|stop)|backup size|new backup label' || status=$?
    [ "$status" = 0 ] || die "The backup failed; see $PG_BACKUP_DIR/log/$PG_BACKUP_STANZA-backup.log"
    echo "Took in $((SECONDS - start)) s: $(pgbr_info_json | python3 scripts/pgbackrest_info.py newest)"
}

# pg_archive_end: the epoch of the last commit in the WAL archive (pg_waldump of its newest
# segments), or nothing when it holds none. A restore to a later moment could not reach it.
pg_archive_end() {
    local seg tries file end
    seg=$(pgbr_info_json | python3 scripts/pgbackrest_info.py max-wal)
    for tries in 1 2 3 4; do
        [ -n "$seg" ] || return 0
        file=$PG_BACKUP_DIR/tmp/$seg
        if pgbr archive-get "$seg" "$file" >/dev/null 2>&1; then
            end=$(as_pg env TZ=UTC "$PG_BIN/pg_waldump" "$file" 2>/dev/null | python3 scripts/pgbackrest_info.py last-commit)
            rm -f "$file"
            [ -n "$end" ] && { echo "$end"; return 0; }
        fi
        seg=$(python3 scripts/pgbackrest_info.py prev-wal "$seg")
    done
}

pg_backup_list() {
    say "PostgreSQL's backups (repository ${PG_BACKUP_REPO:-$PG_BACKUP_DIR/repo})"
    pgbr_info_json | python3 scripts/pgbackrest_info.py list "$(pg_archive_end)"
}

pg_running() { [ -f "$PG_DATA/postmaster.pid" ] && as_pg "$PG_BIN/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1; }

pg_psql() { as_pg "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U ugcsite -d ugcsite -tAq "$@"; }

# alive PID: the process runs (a zombie its parent has not reaped yet does not).
alive() { case "$(ps -o stat= -p "$1" 2>/dev/null)" in ''|Z*) return 1 ;; esac; }

# site_stop: the make run serving this var/ (supervisord and, through run.sh's exit, its servers).
site_stop() {
    local pidfile=${RUN_DIR:-${VAR:-$PWD/var}/run}/supervisord.pid pid i
    pid=$(cat "$pidfile" 2>/dev/null) || return 0
    alive "$pid" || return 0
    say "Stopping the site (make run, supervisord $pid)"
    local parent
    parent=$(ps -o ppid= -p "$pid" | tr -d ' ')
    [[ "$(ps -o args= -p "$parent" 2>/dev/null)" == *scripts/run.sh* ]] || parent=
    local start=$SECONDS
    kill -TERM "$pid"
    for i in $(seq 1 600); do
        alive "$pid" || break
        sleep 0.1
    done
    alive "$pid" && die "The site did not stop within a minute; stop make run (Ctrl-C) and run make restore again."
    # make run's own exit then stops PostgreSQL and Redis: wait for it.
    for i in $(seq 1 600); do
        [ -n "$parent" ] && alive "$parent" || break
        sleep 0.1
    done
    echo "Stopped in $((SECONDS - start)) s."
}

# pg_backup_restore TARGET: PostgreSQL as it was at TARGET (or the archive's end: latest), then
# Redis rebuilt from it, then a full backup that starts the restored history.
pg_backup_restore() {
    local target=${1:-} when= oldest end
    [ -n "$target" ] || die "Say to which moment: make restore TARGET=\"2026-12-01 10:15:00+00\" (UTC unless it carries its zone), or TARGET=latest."
    oldest=$(pgbr_info_json | python3 scripts/pgbackrest_info.py oldest)
    [ -n "$oldest" ] || die "There is no backup to restore from: make backup takes one (make run takes the first by itself)."
    # What cannot be restored is refused before anything stops (the archive cannot reach past now).
    [ "$target" = latest ] || python3 scripts/pgbackrest_info.py target "$target" "$oldest" "$(date +%s)" >/dev/null || exit 1
    site_stop
    # Archive the very last commits first: a commit now, the WAL switched and archived (check).
    if [ -f "$PG_DATA/PG_VERSION" ]; then
        local archived_at=$SECONDS
        if { pg_running || (pg_start "$PG_DATA" "$PG_PORT"); } && pg_psql -c "SELECT txid_current()" >/dev/null \
            && pgbr check >/dev/null 2>&1; then
            say "Archived the last commits ($((SECONDS - archived_at)) s)"
        else
            say "Could not archive the running cluster's last WAL; restoring from what the archive holds"
        fi
        pg_stop "$PG_DATA"
    fi
    end=$(pg_archive_end)
    if [ "$target" != latest ]; then
        when=$(python3 scripts/pgbackrest_info.py target "$target" "$oldest" "$end") || exit 1
    fi
    local start=$SECONDS args=(--delta --log-level-console=info)
    if [ "$target" = latest ]; then
        say "Restoring PostgreSQL to the end of the WAL archive"
    else
        say "Restoring PostgreSQL to $when"
        args+=(--type=time "--target=$when" --target-action=promote)
    fi
    local status=0
    pgbr restore "${args[@]}" 2>&1 | pgbr_progress 'restore backup set|restore size|write updated' || status=$?
    [ "$status" = 0 ] || die "pgBackRest could not restore; see $PG_BACKUP_DIR/log/$PG_BACKUP_STANZA-restore.log"
    # The backup copied the socket's lock file (the socket lives in the data folder); its PID, long
    # gone, may be another process's by now, and PostgreSQL would then refuse to start.
    as_pg rm -f "$PG_DATA"/.s.PGSQL.*.lock
    say "Replaying the WAL archive (log: $PG_DATA/server.log)"
    (pg_start "$PG_DATA" "$PG_PORT") || die "PostgreSQL did not come back from the restore; the end of $PG_DATA/server.log:
$(tail -n 15 "$PG_DATA/server.log")"
    local i
    for i in $(seq 1 6000); do
        [ "$(pg_psql -c 'SELECT pg_is_in_recovery()' 2>/dev/null)" = f ] && break
        pg_running || die "PostgreSQL stopped while replaying; the end of $PG_DATA/server.log:
$(tail -n 15 "$PG_DATA/server.log")"
        (( i % 50 == 0 )) && echo "  still replaying: at $(pg_psql -c 'SELECT pg_last_wal_replay_lsn()' 2>/dev/null)"
        sleep 0.1
    done
    [ "$(pg_psql -c 'SELECT pg_is_in_recovery()')" = f ] || die "PostgreSQL was still replaying after 10 minutes; see $PG_DATA/server.log."
    # The recovery settings pgBackRest wrote would confuse a later standby of this cluster.
    as_pg sed -i -E '/^(restore_command|recovery_target[a-z_]*) =/d' "$PG_DATA/postgresql.auto.conf"
    echo "PostgreSQL restored and promoted in $((SECONDS - start)) s."
    pg_backup_redis_rebuild
    # A restore to a past moment starts a new timeline; a full backup on it is the base of later restores.
    pg_backup_take full
    pg_stop "$PG_DATA"
    say "Restored to ${when:-the end of the archive}. make run serves it."
}

# redis_start_own DIR PORT: make run's Redis kept in DIR, refusing a port another server answers on
# (it is about to be emptied).
redis_start_own() {
    redis-cli -p "$2" ping >/dev/null 2>&1 && die "A Redis already answers on port $2, and it is not make run's of this folder
  (another checkout's make run?). Stop it, or set LOCAL_REDIS_PORT and LOCAL_BROKER_PORT as make run had
  them, and run the restore again: PostgreSQL is already restored, and the restore is safe to repeat."
    redis_start "$1" "$2"
}

# pg_backup_redis_rebuild: the data Redis emptied (every later timeline, count and pending read
# gone), Celery's queue and Django's cache too, then rebuilt from the restored PostgreSQL.
pg_backup_redis_rebuild() {
    local started_redis= started_broker= REDIS_DIR=$VAR/redis BROKER_DIR=$VAR/redis-broker
    if [ -z "${REDIS_URL:-}" ]; then
        ensure_redis; redis_start_own "$REDIS_DIR" "$REDIS_PORT"; started_redis=1
        export REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
    fi
    if [ -z "${PLAIN_REDIS_URL:-}${CELERY_BROKER_URL:-}${CACHE_URL:-}" ]; then
        redis_start_own "$BROKER_DIR" "$BROKER_PORT"; started_broker=1
        export PLAIN_REDIS_URL="redis://127.0.0.1:$BROKER_PORT/0"
    fi
    say "Rebuilding Redis from the restored PostgreSQL"
    local status=0 start=$SECONDS
    DATABASE_URL="postgres://ugcsite@127.0.0.1:$PG_PORT/ugcsite" DJANGO_SECRET_KEY=${DJANGO_SECRET_KEY:-restore} \
        DJANGO_DEBUG=0 .venv/bin/python manage.py rebuild_redis --flush || status=$?
    [ -n "$started_broker" ] && redis_stop "$BROKER_DIR" "$BROKER_PORT"
    [ -n "$started_redis" ] && redis_stop "$REDIS_DIR" "$REDIS_PORT"
    if [ "$status" != 0 ]; then
        pg_stop "$PG_DATA"   # as make run expects to find it
        die "rebuild_redis failed (above); PostgreSQL is restored: run make run, whose start rebuilds an empty Redis."
    fi
    echo "Rebuilt in $((SECONDS - start)) s."
}

# Run as a command (make backup, make backups, make restore, beat's task, the tests).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    cd "$(dirname "$0")/.."
    source scripts/services.sh
    [ "${PG_BACKUP:-1}" = 0 ] && die "Backups are off (PG_BACKUP=0)."
    ensure_postgres
    VAR=${UGC_VAR:-$PWD/var}
    # The ports make run chose for this var/, unless the caller names its cluster (PG_DATA, PG_PORT).
    [ -n "${PG_PORT:-}" ] || local_ports "$VAR" $(grep -v '^#' scripts/ports.env)
    pg_backup_prepare "${PG_DATA:-$VAR/pg}" "$PG_PORT"
    command=${1:-}; shift || true
    case "$command" in
        start)
            pg_start "$PG_DATA" "$PG_PORT"
            pg_backup_started ;;
        stop)
            pg_stop "$PG_DATA" ;;
        backup|list)
            [ -f "$PG_DATA/PG_VERSION" ] || die "There is no PostgreSQL cluster in $PG_DATA yet: make run makes it."
            started=
            # A cluster that is not running is started for the backup (archiving), then stopped.
            if [ "$command" = backup ] && ! pg_running; then pg_start "$PG_DATA" "$PG_PORT"; started=1; fi
            if [ "$command" = backup ]; then pg_backup_take "${1:-full}"; else pg_backup_list; fi
            [ -z "$started" ] || pg_stop "$PG_DATA" ;;
        restore)
            pg_backup_restore "${1:-}" ;;
        *)
            die "scripts/pg-backup.sh backup [full|diff|incr] | list | restore TARGET | start | stop" ;;
    esac
fi
