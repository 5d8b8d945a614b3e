#!/usr/bin/env bash
# serve.sh: the site's processes under supervisord, in the foreground until SIGTERM or Ctrl-C.
# `make run` (scripts/run.sh) calls it once the servers are up and migrated; `make soak`, the HTTP
# benchmark and the tests' server start the site through it too, so each measures what ships.
#
# The caller's environment names the servers (DATABASE_URL, REDIS_URL, ...) and:
#   PORT        where the site answers (nginx)                       RUN_DIR  sockets, logs, pid files
#   WEB_STACK   split (default): nginx -> WSGI_SERVER (HTTP) + uvicorn (/ws/); or, for the
#               benchmark's comparison only, uvicorn or granian serving everything on PORT
#   WSGI_SERVER gunicorn (default) or granian                       WEB_WORKERS  HTTP processes
#   LIVE_WORKERS uvicorn processes for /ws/                         CELERY_CONCURRENCY  Celery's
#               (the three sizes' defaults: ugcsite.serving.PROCESS_SIZES)
#   SERVE_TASKS 1 (default) also runs the Celery worker and beat; 0 leaves them to the caller
#               (the tests run a worker of their own)
#   DATABASE_POOL_SIZE connections a process may hold (4): ugcsite.serving adds up the budget.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/services.sh
[ -n "${RUN_DIR:-}" ] && [ -n "${PORT:-}" ] || die "serve.sh needs RUN_DIR and PORT (scripts/run.sh sets them)."
export WEB_STACK=${WEB_STACK:-split} WSGI_SERVER=${WSGI_SERVER:-gunicorn}
sizes=$(python -m ugcsite.serving sizes) || die "Set WEB_WORKERS, LIVE_WORKERS and CELERY_CONCURRENCY to whole numbers from 1."
eval "$sizes"   # WEB_WORKERS, LIVE_WORKERS, CELERY_CONCURRENCY: their defaults live in ugcsite.serving
export SERVE_TASKS=${SERVE_TASKS:-1}
mkdir -p "$RUN_DIR/nginx"
export RUN_DIR=$(cd "$RUN_DIR" && pwd -P)
rm -f "$RUN_DIR/web.sock" "$RUN_DIR/live.sock"
if [ -z "${PROMETHEUS_MULTIPROC_DIR:-}" ]; then
    # Every process writes its metrics here; /metrics adds them up.
    export PROMETHEUS_MULTIPROC_DIR=$RUN_DIR/prometheus
    rm -rf "$PROMETHEUS_MULTIPROC_DIR"; mkdir -p "$PROMETHEUS_MULTIPROC_DIR"
fi
python -m ugcsite.serving check

# Frames up to 4 MiB reach the live app, which refuses those past LIVE_MAX_FRAME with a close of
# its own (1009) and a sentence saying why. No permessage-deflate: a board's frames are small JSON,
# and compressing each once per receiver cost more CPU and memory (a zlib state a connection) than
# it saved on the wire (bench/results/live.md); y-websocket's server leaves it off too.
# --log-level warning, as the WSGI servers': uvicorn logs every socket it accepts at info ("[accepted]",
# an access log --no-access-log leaves on), and writing those lines was a fifth of the live
# process's loop while 5,000 sockets connected (issue 42, py-spy).
live="uvicorn ugcsite.asgi:application --ws ugcsite.platform.livesocket:LingeringProtocol --ws-max-size 4194304 --ws-per-message-deflate false --timeout-graceful-shutdown 5 --no-access-log --log-level warning"
case "$WEB_STACK" in
    split)
        ensure_nginx
        python -m ugcsite.serving nginx-conf > "$RUN_DIR/nginx.conf"
        export SERVE_PROXY=1 SERVE_LIVE=1 CLIENT_ADDRESS_HEADER=HTTP_X_REAL_IP
        export LIVE_COMMAND="$live --uds $RUN_DIR/live.sock --workers $LIVE_WORKERS"
        case "$WSGI_SERVER" in
            gunicorn) export WEB_COMMAND="gunicorn ugcsite.wsgi --bind unix:$RUN_DIR/web.sock --workers $WEB_WORKERS --limit-request-line 8190 --error-logfile - --log-level warning --graceful-timeout 5" ;;
            granian) export WEB_COMMAND="granian --interface wsgi --uds $RUN_DIR/web.sock --workers $WEB_WORKERS --blocking-threads $(( ${DATABASE_POOL_SIZE:-4} > 0 ? ${DATABASE_POOL_SIZE:-4} : 4 )) --log-level warning ugcsite.wsgi:application" ;;
            *) die "WSGI_SERVER is gunicorn or granian, not '$WSGI_SERVER'." ;;
        esac ;;
    uvicorn)
        export SERVE_PROXY=0 SERVE_LIVE=0 LIVE_COMMAND=true
        export WEB_COMMAND="$live --host 127.0.0.1 --port $PORT --workers $WEB_WORKERS" ;;
    granian)
        export SERVE_PROXY=0 SERVE_LIVE=0 LIVE_COMMAND=true
        export WEB_COMMAND="granian --interface asgi --host 127.0.0.1 --port $PORT --workers $WEB_WORKERS --ws --log-level warning ugcsite.asgi:application" ;;
    *) die "WEB_STACK is split, uvicorn or granian, not '$WEB_STACK'." ;;
esac
exec supervisord -c scripts/supervisord.conf
