"""How the site is served: the processes `scripts/serve.sh` starts under supervisord (the same for
`make run`, `make soak`, the HTTP benchmark and the tests' server), the PostgreSQL connections
they may hold together, and nginx's configuration in front of them.

    python -m ugcsite.serving sizes        the process sizes, as `export NAME=value` for a shell
    python -m ugcsite.serving budget       the connection budget, one line a part
    python -m ugcsite.serving check        exit 1 with a sentence when it exceeds max_connections
    python -m ugcsite.serving nginx-conf   nginx.conf for RUN_DIR and PORT, on stdout

The stack (chosen by measurement, bench/serving.py): nginx on PORT hands HTTP to a WSGI server's
WEB_WORKERS processes and /ws/ to uvicorn's LIVE_WORKERS processes (Channels), both on Unix
sockets in RUN_DIR; Celery's worker (CELERY_CONCURRENCY processes) and beat run beside them.
"""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import django
from django.conf import settings
from django.db import OperationalError, connection

from feeds.rules import IMAGE_UPLOAD_MAX, LIVE_SEND_TIMEOUT
from social.rules import AVATAR_BODY_MAX

ROOT = Path(__file__).resolve().parent.parent

# Connections kept free for what runs beside the site: the admin's shell, `migrate`,
# `rebuild_redis`, psql, a backup.
DATABASE_HEADROOM = int(os.environ.get("DATABASE_HEADROOM", "10"))
# The site's process sizes, each overridable by the environment variable of its name: HTTP
# processes, live (/ws/) processes, and Celery worker processes (each runs one task at a time;
# beat is one process). scripts/serve.sh takes them from here (``sizes``), as the budget does.
PROCESS_SIZES = {"WEB_WORKERS": 3, "LIVE_WORKERS": 1, "CELERY_CONCURRENCY": 2}


def sizes(env: dict | None = None) -> dict[str, int]:
    """PROCESS_SIZES with the environment's (or ``env``'s) own values; a ValueError names a value
    that is no whole number from 1."""
    env = os.environ if env is None else env
    found = {}
    for name, default in PROCESS_SIZES.items():
        raw = env.get(name, "") or str(default)
        if not (raw.isascii() and raw.isdigit() and int(raw) >= 1):
            raise ValueError(f"{name} must be a whole number from 1; it is {raw[:20]!r}.")
        found[name] = int(raw)
    return found


def worker_command(hostname: str, *options: str, loglevel: str = "warning") -> list[str]:
    """The command line of a Celery worker outside supervisord (the tests' and the benchmarks'):
    ``celery -A ugcsite worker`` as this Python runs it, named ``hostname`` (``%h`` is the host),
    without gossip and mingle (one worker, found at once), with ``options`` (``--pool=solo``,
    ``--concurrency=2``, ``-Q queue``, ``-I module``)."""
    return [
        *(sys.executable, "-m", "celery", "-A", "ugcsite", "worker", *options, f"--loglevel={loglevel}"),
        *("--without-gossip", "--without-mingle", "--hostname", hostname),
    ]


@dataclass(frozen=True)
class Part:
    name: str
    processes: int
    connections_each: int

    @property
    def connections(self) -> int:
        return self.processes * self.connections_each


def processes(env: dict | None = None) -> list[Part]:
    """The site's processes (scripts/serve.sh's sizes, from ``env`` or this process's environment),
    each holding at most its pool (DATABASE_POOL_SIZE) of PostgreSQL connections. Each names
    itself to PostgreSQL as ugcsite-<program> (application_name; scripts/supervisord.conf)."""
    env = os.environ if env is None else env
    pool = int(env.get("DATABASE_POOL_SIZE", settings.DATABASE_POOL_SIZE))
    size = sizes(env)
    return [
        Part("web (HTTP, WSGI)", size["WEB_WORKERS"], pool),
        Part("live (/ws/, ASGI)", size["LIVE_WORKERS"], pool),
        Part("Celery worker", size["CELERY_CONCURRENCY"], pool),
        Part("Celery beat", 1, pool),
    ]


def parts(env: dict | None = None) -> list[Part]:
    """What may hold a PostgreSQL connection: the site's processes and the headroom beside them."""
    return [*processes(env), Part("headroom (admin, migrate, rebuild_redis, psql)", 1, DATABASE_HEADROOM)]


def site_connections_max(env: dict | None = None) -> int:
    """The most connections the site's own processes can hold at once: every pool full."""
    return sum(part.connections for part in processes(env))


def connection_budget(env: dict | None = None) -> int:
    """What the whole site may hold: every pool full, plus the headroom. Below max_connections."""
    return sum(part.connections for part in parts(env))


# The site's own connections, as PostgreSQL counts them (scripts/supervisord.conf names them).
SITE_CONNECTIONS_SQL = "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'ugcsite-%'"


def max_connections() -> int:

    with connection.cursor() as cursor:
        cursor.execute("SHOW max_connections")
        return int(cursor.fetchone()[0])


def nginx_conf(*, run_dir: str, port: int, host: str = "127.0.0.1") -> str:
    """nginx in front of the web and live servers. Its own refusals (a malformed request, a URL
    or header past its buffers, a body past the largest any view takes) and an upstream that is
    down answer the API's error object: a JSON ``detail`` sentence (and Retry-After on a 503).
    Bodies are read whole before they are handed on (a chunked one arrives with a Content-Length),
    so Django's own limit answers 413 for a chunked body as for any other."""
    body_max = max(settings.API_MAX_BODY_BYTES, AVATAR_BODY_MAX, IMAGE_UPLOAD_MAX)
    user = "user root root;" if os.geteuid() == 0 else ""  # workers reach the sockets in RUN_DIR
    errors = {
        400: "The request is malformed (its request line or a header could not be read). Send valid HTTP/1.1.",
        413: f"The body is larger than any endpoint accepts ({body_max / 1024 / 1024:g} MiB at most). Send a smaller one.",
        414: "The URL is too long (at most 8 KiB). Send long values in a JSON body instead.",
        494: "A request header is too long (at most 8 KiB each). Send shorter headers.",
    }
    # error_page to a URI, not a named location: a request whose line could not be read has no
    # URI of its own, and nginx cannot hand such a request to a named location.
    pages = "\n".join(
        f"        error_page {code} ={400 if code == 494 else code} /.error/{code};\n"
        f"        location = /.error/{code} {{ internal; default_type application/json; "
        f'return {400 if code == 494 else code} \'{{"detail": "{text}"}}\'; }}'
        for code, text in errors.items()
    )
    unavailable = "The site is restarting or overloaded for a moment; nothing was lost. Try again in 5 seconds."
    methods = "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"  # what the site answers; nginx refuses TRACE, CONNECT
    # The pictures in the local storage (feeds.images), straight from disk: a copy's name is
    # random and never reused (hiding moves it), so it is cached for a year. Another storage
    # (S3) serves its own addresses, and nothing is written here for it.
    media = ""
    if settings.MEDIA_STORAGE_BACKEND == "django.core.files.storage.FileSystemStorage":
        media = (
            f"        location {settings.MEDIA_URL}images/ {{ alias {settings.MEDIA_ROOT}/images/; "
            "types { image/png png; image/jpeg jpg; image/webp webp; } default_type application/octet-stream; "
            'add_header Cache-Control "public, max-age=31536000, immutable"; '
            "add_header X-Content-Type-Options nosniff; "
            "add_header Content-Security-Policy \"default-src 'none'\"; }"
        )
    return f"""# Written by `python -m ugcsite.serving nginx-conf` (scripts/serve.sh); edit that, not this.
{user}
daemon off;
worker_processes 1;
pid {run_dir}/nginx.pid;
error_log {run_dir}/nginx-error.log warn;
events {{ worker_connections 12000; }}
worker_rlimit_nofile 16384;
http {{
    access_log off;
    server_tokens off;
    client_body_temp_path {run_dir}/nginx/body;
    proxy_temp_path {run_dir}/nginx/proxy;
    fastcgi_temp_path {run_dir}/nginx/fastcgi;
    uwsgi_temp_path {run_dir}/nginx/uwsgi;
    scgi_temp_path {run_dir}/nginx/scgi;
    client_max_body_size {body_max};
    client_body_buffer_size 1m;
    large_client_header_buffers 4 8k;
    keepalive_requests 10000;
    upstream web {{ server unix:{run_dir}/web.sock max_fails=0; keepalive 64; }}
    upstream live {{ server unix:{run_dir}/live.sock max_fails=0; }}
    map $http_upgrade $connection_upgrade {{ default upgrade; "" close; }}
    server {{
        listen {host}:{port} default_server backlog=4096;
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Real-IP $remote_addr;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header Connection "";
        proxy_buffers 16 16k;
        proxy_read_timeout 60s;
        location / {{ proxy_pass http://web; }}
{media}
        location /ws/ {{
            proxy_pass http://live;
            # proxy_set_header here replaces every one of the server's: all are named again.
            proxy_set_header Host $http_host;
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_buffering off;
            # What nginx holds for each open socket: one buffer a direction, of this size (a page,
            # 4k, by default). A frame larger than it is passed on in pieces.
            proxy_buffer_size 1k;
            proxy_read_timeout 1h;
            proxy_send_timeout 1h;
            # A client that takes nothing of what the board sends for this long is cut, and its
            # socket in the live server with it (feeds.live.hub.Outbox stops queueing for it
            # sooner, at LIVE_SEND_BUFFER): the others never wait for it.
            send_timeout {LIVE_SEND_TIMEOUT:g}s;
        }}
{pages}
        error_page 405 =405 /.error/405;
        location = /.error/405 {{
            internal;
            default_type application/json;
            add_header Allow "{methods}" always;
            return 405 '{{"detail": "This method is not allowed on this site; use one of {methods}."}}';
        }}
        error_page 502 504 =503 /.error/503;
        location = /.error/503 {{
            internal;
            default_type application/json;
            add_header Retry-After 5 always;
            return 503 '{{"detail": "{unavailable}"}}';
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it (read from /proc), parents first, siblings by pid."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    found, queue = [], [pid]
    while queue:
        current = queue.pop(0)
        found.append(current)
        queue.extend(sorted(children.get(current, [])))
    return found


class Site:
    """The site started through scripts/serve.sh, as `make run` serves it, in RUN_DIR ``run_dir``
    on a free port (or ``port``): what the tests' server, the soak and the HTTP benchmark start.
    ``env`` is the whole environment (the servers' URLs, DJANGO_DEBUG=0, ...); ``collect_static``
    makes the STATIC_ROOT it names. The output of every process goes to RUN_DIR/site.log."""

    def __init__(self, run_dir: Path, env: dict, *, port: int | None = None):
        self.run_dir = Path(run_dir)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}"
        self.env = {**env, "RUN_DIR": str(self.run_dir), "PORT": str(self.port)}
        self.process: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.run_dir / "site.log"

    def collect_static(self) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "collectstatic", "--noinput", "-v", "0"],
            cwd=ROOT,
            env=self.env,
            check=True,
            timeout=300,
        )

    def start(self, *, timeout: float = 90) -> None:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [str(ROOT / "scripts" / "serve.sh")],
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not (self._answers(self.url + "/healthz") and self._live_answers()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop(kill=True)
                tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
                raise RuntimeError(
                    f"The site did not start within {timeout:.0f} s; the end of {self.log_path}:\n{tail}"
                )
            time.sleep(0.1)

    @staticmethod
    def _answers(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.status == 200
        except OSError:
            return False

    def _live_answers(self) -> bool:
        """The live server answers on its socket (or there is none: WEB_STACK uvicorn or granian)."""
        if self.env.get("WEB_STACK", "split") != "split":
            return True
        try:
            with socket.socket(socket.AF_UNIX) as probe:
                probe.settimeout(2)
                probe.connect(str(self.run_dir / "live.sock"))
                probe.sendall(b"GET /healthz HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                return probe.recv(64).startswith(b"HTTP/1.1 200")
        except OSError:
            return False

    def supervisorctl(self, *args: str) -> subprocess.CompletedProcess:
        """``supervisorctl status``, ``stop web``, ...: the site's processes, by their program names."""
        return subprocess.run(
            [sys.executable, "-m", "supervisor.supervisorctl", "-c", "scripts/supervisord.conf", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def pids(self) -> list[int]:
        """supervisord's and every process it started (nginx, the servers' workers, Celery's)."""
        if self.process is None or self.process.poll() is not None:
            return []
        return descendants(self.process.pid)

    def stop(self, *, kill: bool = False, timeout: float = 60) -> None:
        """SIGTERM to supervisord, which stops every process; ``kill``: SIGKILL to every process at once."""
        if self.process is None:
            return
        if kill:
            for pid in self.pids():
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        elif self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.stop(kill=True)

    def restart(self) -> None:
        """A crash: every process killed (SIGKILL), then the site started again on the same port."""
        self.stop(kill=True)
        self.start()


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "budget"
    if command == "sizes":  # for scripts/serve.sh to eval: no Django needed
        try:
            print("export " + " ".join(f"{name}={value}" for name, value in sizes().items()))
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 1
        return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ugcsite.settings")
    django.setup()
    if command == "nginx-conf":
        print(nginx_conf(run_dir=os.environ["RUN_DIR"], port=int(os.environ["PORT"])))
        return 0
    if command == "budget":
        for part in parts():
            print(f"{part.name}: {part.processes} x {part.connections_each} = {part.connections}")
        print(f"total: {connection_budget()}")
        return 0
    if command == "check":
        budget = connection_budget()
        try:
            limit = max_connections()
        except OperationalError as error:
            print(
                f"warning: PostgreSQL did not answer ({str(error).strip().splitlines()[0]}); the site starts and "
                f"answers 503 until it does. It may hold {budget} connections.",
                file=sys.stderr,
            )
            return 0
        if budget >= limit:
            print(
                f"error: the site may hold {budget} PostgreSQL connections (python -m ugcsite.serving budget) but "
                f"PostgreSQL allows {limit}. Lower WEB_WORKERS, LIVE_WORKERS, CELERY_CONCURRENCY or DATABASE_POOL_SIZE, "
                "or raise max_connections.",
                file=sys.stderr,
            )
            return 1
        print(f"PostgreSQL connections: at most {budget} of {limit} (python -m ugcsite.serving budget)")
        return 0
    print(f"unknown command {command!r}: use sizes, budget, check or nginx-conf", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
