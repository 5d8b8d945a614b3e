"""The small parsing jobs of scripts/pg-backup.sh, in Python 3 without Django (the system's python3).

conf                  pgbackrest.conf from the environment (PG_BACKUP_REPO, PG_BACKUP_DIR, ...)
newest  < info.json   one line: the newest backup (label, type, sizes, times)
list END < info.json  every backup with its size and time range, then what can be restored
oldest  < info.json   the epoch at which the oldest backup became consistent (its stop), or nothing
max-wal < info.json   the newest WAL segment in the archive, or nothing
prev-wal SEGMENT      the segment before SEGMENT on its timeline, or nothing
last-commit < waldump the epoch of the last COMMIT in pg_waldump's output, or nothing
target TEXT OLDEST END  TEXT in UTC ("2026-12-01 10:15:00.000000+00"), or why it cannot be restored
"""

import json
import os
import re
import sys
import time
from datetime import UTC, datetime
from urllib.parse import parse_qs, unquote, urlsplit

WAL_SEGMENTS_PER_ID = 0x100  # 16 MB segments: the low part of a segment's name runs 00000000..000000FF


def utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S+00")


def size(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def conf() -> str:
    """pgBackRest's configuration: the repository (PG_BACKUP_REPO: a folder, by default under var/,
    or s3://KEY:SECRET@HOST[:PORT]/BUCKET/PATH?region=R), retention, and one stanza for make run's cluster."""
    backup_dir = os.environ["PG_BACKUP_DIR"]
    repo = os.environ.get("PG_BACKUP_REPO") or f"{backup_dir}/repo"
    lines = [
        "[global]",
        f"lock-path={backup_dir}/lock",
        f"log-path={backup_dir}/log",
        f"spool-path={backup_dir}/spool",
        "log-level-file=info",
        "start-fast=y",
        "compress-type=zst",
        "process-max=2",
        f"repo1-retention-full={int(os.environ.get('PG_BACKUP_KEEP_FULL', '4'))}",
    ]
    if repo.startswith("s3://"):
        url = urlsplit(repo)
        query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        bucket, _, path = url.path.lstrip("/").partition("/")
        if not (url.hostname and bucket):
            sys.exit(f"PG_BACKUP_REPO={repo!r}: an S3 repository is s3://KEY:SECRET@HOST[:PORT]/BUCKET/PATH?region=R")
        key = unquote(url.username or "") or os.environ.get("AWS_ACCESS_KEY_ID", "")
        secret = unquote(url.password or "") or os.environ.get("AWS_SECRET_ACCESS_KEY", "")
        if not (key and secret):
            sys.exit(
                f"PG_BACKUP_REPO={repo!r} names no key: put KEY:SECRET@ before the host, "
                "or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
            )
        lines += [
            "repo1-type=s3",
            f"repo1-path=/{path.strip('/')}",
            f"repo1-s3-endpoint={url.hostname}",
            f"repo1-s3-bucket={bucket}",
            f"repo1-s3-region={query.get('region', 'us-east-1')}",
            f"repo1-s3-uri-style={query.get('uri-style', 'path')}",
            f"repo1-s3-key={key}",
            f"repo1-s3-key-secret={secret}",
        ]
        if url.port:
            lines.append(f"repo1-storage-port={url.port}")
        if query.get("verify-tls") in {"n", "no", "0", "false"}:
            lines.append("repo1-storage-verify-tls=n")
    else:
        if not repo.startswith("/"):
            sys.exit(f"PG_BACKUP_REPO={repo!r}: give an absolute folder (/mnt/backups/ugcsite) or an s3:// URL.")
        lines += ["repo1-type=posix", f"repo1-path={repo}"]
    lines += [
        "",
        "[global:backup]",
        "exclude=server.log",  # make run's log in the data folder: a restore keeps the one it has
        "",
        "[ugcsite]",
        f"pg1-path={os.environ['PG_DATA']}",
        f"pg1-port={os.environ['PG_PORT']}",
        f"pg1-socket-path={os.environ['PG_DATA']}",
        "pg1-user=ugcsite",
        "pg1-database=ugcsite",
    ]
    return "\n".join(lines) + "\n"


def stanza(info: list) -> dict:
    return info[0] if info else {}


def describe(backup: dict) -> str:
    t = backup["timestamp"]
    return (
        f"{backup['label']}  {backup['type']:<5}  {utc(t['start'])} -> {utc(t['stop'])} ({t['stop'] - t['start']} s)  "
        f"database {size(backup['info']['size'])}, in the repository {size(backup['info']['repository']['delta'])}"
    )


def listing(info: list, end: str) -> str:
    backups = stanza(info).get("backup", [])
    if not backups:
        return "No backup yet: `make backup` takes one (make run takes the first by itself)."
    out = ["label                              type   started -> finished (duration)  sizes"]
    out += [describe(b) for b in backups]
    archives = stanza(info).get("archive", [])
    if archives:
        out.append(f"WAL archive: {archives[-1].get('min')} .. {archives[-1].get('max')}")
    oldest = backups[0]["timestamp"]["stop"]
    last = f"its last archived commit ({utc(float(end))})" if end else "its last archived commit"
    out.append(
        f"Restorable to any moment from {utc(oldest)} to {last}, or to now while PostgreSQL runs: "
        "make restore first archives what it committed since. "
        'make restore TARGET="YYYY-MM-DD HH:MM:SS+00" (or TARGET=latest).'
    )
    return "\n".join(out)


def prev_wal(segment: str) -> str:
    timeline, log, seg = int(segment[:8], 16), int(segment[8:16], 16), int(segment[16:24], 16)
    n = log * WAL_SEGMENTS_PER_ID + seg - 1
    return "" if n < 0 else f"{timeline:08X}{n // WAL_SEGMENTS_PER_ID:08X}{n % WAL_SEGMENTS_PER_ID:08X}"


COMMIT_RE = re.compile(r"desc: COMMIT (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC")


def last_commit(waldump: str) -> str:
    """pg_waldump, run with TZ=UTC, prints a commit as "desc: COMMIT 2026-11-28 14:50:01.12 UTC; ..."
    (the fraction's trailing zeros dropped)."""
    found = COMMIT_RE.findall(waldump)
    if not found:
        return ""
    return f"{datetime.fromisoformat(found[-1]).replace(tzinfo=UTC).timestamp():.6f}"


def target(text: str, oldest: str, end: str) -> str:
    """TEXT as pgBackRest's --target in UTC, or a sentence (exit 1) when it is not a moment or lies
    outside what the repository can restore: before the oldest backup became consistent (OLDEST),
    after the archive's last commit (END, an epoch; empty when unknown)."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(text.replace(" UTC", "+00:00"))
    except ValueError:
        sys.exit(
            f'TARGET={text!r} is not a moment: write it as TARGET="2026-12-01 10:15:00+00" '
            "(UTC unless it carries its zone), or TARGET=latest."
        )
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    if moment.timestamp() < float(oldest):
        sys.exit(
            f"TARGET={text!r} is before the oldest backup, which is consistent from {utc(float(oldest))}: "
            "nothing older can be restored (make backups lists what can)."
        )
    if moment.timestamp() > time.time():
        sys.exit(f"TARGET={text!r} is in the future (it is {utc(time.time())} now): nothing after now can be restored.")
    if end and moment.timestamp() > float(end):
        sys.exit(
            f"TARGET={text!r} is after the end of the WAL archive: its last commit is at {utc(float(end))}, and "
            "nothing later was archived. TARGET=latest restores the newest state."
        )
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f+00")


def main(argv: list[str]) -> None:
    command, args = argv[0], argv[1:]
    if command == "conf":
        print(conf(), end="")
    elif command == "prev-wal":
        print(prev_wal(args[0]))
    elif command == "last-commit":
        print(last_commit(sys.stdin.read()))
    elif command == "target":
        print(target(*args))
    else:
        info = json.load(sys.stdin)
        backups = stanza(info).get("backup", [])
        if command == "newest":
            print(describe(backups[-1]) if backups else "")
        elif command == "list":
            print(listing(info, args[0] if args else ""))
        elif command == "oldest":
            print(backups[0]["timestamp"]["stop"] if backups else "")
        elif command == "max-wal":
            archives = [a for a in stanza(info).get("archive", []) if a.get("max")]
            print(archives[-1]["max"] if archives else "")
        else:
            sys.exit(f"pgbackrest_info.py: unknown command {command!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
