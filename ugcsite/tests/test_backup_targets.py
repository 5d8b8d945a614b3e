"""The parsing of scripts/pgbackrest_info.py that make restore and make backups lean on: which
targets are refused and with what sentence, the archive's last commit read from pg_waldump, the
segment before another, and the repository setting (a folder or an S3 store) as pgBackRest's
config. The restore itself runs for real in test_backup_restore.py."""

import importlib.util
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("pgbackrest_info", ROOT / "scripts" / "pgbackrest_info.py")
info = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(info)

OLDEST = 1796112000.0  # 2026-12-01 08:00:00+00
END = 1796119200.0  # 2026-12-01 10:00:00+00


def refusal(*args) -> str:
    with pytest.raises(SystemExit) as refused:
        info.target(*args)
    return str(refused.value.code)


def test_a_target_is_read_in_utc_whatever_zone_it_is_written_in(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: END + 3600)
    assert info.target("2026-12-01 09:15:00+00", str(OLDEST), str(END)) == "2026-12-01 09:15:00.000000+00"
    assert info.target("2026-12-01T11:15:00+02:00", str(OLDEST), str(END)) == "2026-12-01 09:15:00.000000+00"
    assert info.target("2026-12-01 09:15", str(OLDEST), str(END)) == "2026-12-01 09:15:00.000000+00"
    assert info.target("2026-12-01 09:15:00.25 UTC", str(OLDEST), "") == "2026-12-01 09:15:00.250000+00"


def test_targets_that_cannot_be_restored_are_refused_with_a_sentence(monkeypatch):
    monkeypatch.setattr(time, "time", lambda: END + 3600)
    assert "is not a moment" in refusal("yesterday", str(OLDEST), str(END))
    assert "before the oldest backup" in refusal("2026-12-01 07:59:59+00", str(OLDEST), str(END))
    assert "2026-12-01 08:00:00+00" in refusal("2026-12-01 07:59:59+00", str(OLDEST), str(END))
    assert "after the end of the WAL archive" in refusal("2026-12-01 10:00:01+00", str(OLDEST), str(END))
    assert "in the future" in refusal("2026-12-01 11:00:01+00", str(OLDEST), "")
    # The edges themselves can be restored.
    assert info.target("2026-12-01 08:00:00+00", str(OLDEST), str(END))
    assert info.target("2026-12-01 10:00:00+00", str(OLDEST), str(END))


def test_the_archives_end_is_its_last_commit_in_pg_waldumps_output():
    waldump = (
        "rmgr: Heap        len (rec/tot):     54/    54, tx:        744, lsn: 0/03000060, desc: INSERT off 3\n"
        "rmgr: Transaction len (rec/tot):     34/    34, tx:        744, lsn: 0/03000098, desc: COMMIT 2026-12-01 09:59:58.123456 UTC\n"
        "rmgr: Transaction len (rec/tot):     34/    34, tx:        745, lsn: 0/030000C0, desc: COMMIT 2026-12-01 10:00:00.5 UTC; inval msgs: catcache 7\n"
        "rmgr: XLOG        len (rec/tot):     24/    24, tx:          0, lsn: 0/030000E8, desc: SWITCH\n"
    )
    assert float(info.last_commit(waldump)) == END + 0.5
    assert info.last_commit("rmgr: XLOG desc: SWITCH\n") == ""


def test_the_segment_before_another_crosses_the_log_boundary():
    assert info.prev_wal("000000020000000100000000") == "0000000200000000000000FF"
    assert info.prev_wal("00000001000000000000000A") == "000000010000000000000009"
    assert info.prev_wal("000000010000000000000000") == ""


def test_the_repository_is_a_folder_or_an_s3_store_by_one_setting(monkeypatch):
    monkeypatch.setenv("PG_BACKUP_DIR", "/srv/ugc/var/pgbackrest")
    monkeypatch.setenv("PG_DATA", "/srv/ugc/var/pg")
    monkeypatch.setenv("PG_PORT", "54320")
    monkeypatch.delenv("PG_BACKUP_REPO", raising=False)
    assert "repo1-path=/srv/ugc/var/pgbackrest/repo\n" in info.conf()
    monkeypatch.setenv("PG_BACKUP_REPO", "/mnt/backup/ugcsite")
    conf = info.conf()
    assert "repo1-type=posix\n" in conf and "repo1-path=/mnt/backup/ugcsite\n" in conf
    monkeypatch.setenv("PG_BACKUP_REPO", "s3://AKIA1:se%2Fcret@minio.local:9000/backups/ugcsite/prod?region=eu-west-1")
    conf = info.conf()
    for line in (
        "repo1-type=s3",
        "repo1-s3-endpoint=minio.local",
        "repo1-storage-port=9000",
        "repo1-s3-bucket=backups",
        "repo1-path=/ugcsite/prod",
        "repo1-s3-region=eu-west-1",
        "repo1-s3-key=AKIA1",
        "repo1-s3-key-secret=se/cret",
    ):
        assert line + "\n" in conf
    monkeypatch.setenv("PG_BACKUP_REPO", "s3://minio.local/backups")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    with pytest.raises(SystemExit, match="names no key"):
        info.conf()
    monkeypatch.setenv("PG_BACKUP_REPO", "backups")
    with pytest.raises(SystemExit, match="absolute folder"):
        info.conf()
