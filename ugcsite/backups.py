"""PostgreSQL's scheduled backups: beat sends ``pg_backup("full")`` weekly and ``pg_backup("diff")``
daily (PG_BACKUP_FULL_CRON, PG_BACKUP_DIFF_CRON); the task runs scripts/pg-backup.sh, as `make backup`
does. Where make run did not set the repository up (PG_BACKUP_CONFIG unset: an external DATABASE_URL,
PG_BACKUP=0, the tests), it does nothing: such a server's backups are its operator's."""

import logging
import os
import subprocess

from celery import shared_task
from django.conf import settings

log = logging.getLogger(__name__)

BACKUP_TIMEOUT_SECONDS = 6 * 3600  # a full backup of a very large cluster; beat's next is a day away


@shared_task(name="ugcsite.backups.pg_backup", ignore_result=True)
def pg_backup(kind: str) -> None:
    if not settings.PG_BACKUP_CONFIG:
        log.info("pg_backup %s skipped: no pgBackRest repository is set up (PG_BACKUP_CONFIG)", kind)
        return
    done = subprocess.run(
        [str(settings.BASE_DIR / "scripts" / "pg-backup.sh"), "backup", kind],
        cwd=settings.BASE_DIR,
        env={**os.environ, "PG_BACKUP_DIR": os.path.dirname(settings.PG_BACKUP_CONFIG)},
        capture_output=True,
        text=True,
        timeout=BACKUP_TIMEOUT_SECONDS,
    )
    if done.returncode:
        log.error("pg_backup %s failed: %s", kind, (done.stdout + done.stderr)[-2000:])
        raise RuntimeError(f"The {kind} backup failed; see var/pgbackrest/log/ugcsite-backup.log")
    log.info("pg_backup %s: %s", kind, done.stdout.strip().splitlines()[-1])
