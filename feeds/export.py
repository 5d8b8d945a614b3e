"""Take my data (docs/api.md, "Safety"): a person's archive, built by a Celery task into a zip
under EXPORT_DIR: ``profile.json``; each board as ``boards/<id>.json`` (the API's full form, times in ISO 8601 as everywhere) and
``boards/<id>.svg`` (its drawing); ``follows.json`` (whom they follow and who follows them);
``reads.json`` (what they read, as kept); ``likes.json`` (the boards they like); ``comments.json``
(what they wrote on boards); ``notifications.json``; ``images.json`` (the pictures they uploaded: id, size, when) and each
picture as ``images/<id>.<png|jpg|webp>``, its stored copy. Written entry by entry from
streaming queries, so memory stays bounded whatever the account holds (10,000 boards are 20,000
small entries, never all in hand); the progress (0-100) is written every PROGRESS_EVERY boards.
Storage only: feeds.tasks runs it, feeds.services.exports starts it."""

import json
import os
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from feeds import images
from feeds.models import Board, Comment, Export, Image, Like, Notification
from feeds.selectors import board_full_json
from feeds.svg import render_svg
from social import reading
from social.models import Follow, Read

User = get_user_model()
PROGRESS_EVERY = 200  # boards between two progress writes
ROWS_AT_ONCE = 500  # rows a streaming query hands over at a time


def export_path(export: Export) -> Path:
    return Path(settings.EXPORT_DIR) / export.file_name


def _plain(value) -> str:
    """A value JSON lacks, as the API writes it: a time in ISO 8601, anything else as text."""
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _json(value) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=1, default=_plain).encode()


def export_build(export_id: int) -> bool:
    """Build one archive; False when it is gone or done already. O(the person's data) time,
    O(one board) memory. A failure marks it failed and removes the half-written file."""
    export = Export.objects.select_related("user").filter(pk=export_id).first()
    if export is None or export.status in (Export.Status.READY, Export.Status.FAILED):
        return False
    user = export.user
    reading.reads_flush()  # the reads still buffered in Redis into PostgreSQL, where they are read
    Path(settings.EXPORT_DIR).mkdir(parents=True, exist_ok=True)
    name = f"ugcsite-{user.username}-{export.pk}-{os.urandom(8).hex()}.zip"
    Export.objects.filter(pk=export.pk).update(status=Export.Status.RUNNING, file_name=name, progress=0)
    path = Path(settings.EXPORT_DIR) / name
    partial = path.with_suffix(".part")
    try:
        boards = Board.objects.filter(author=user, state=Board.State.PUBLISHED).select_related("author")
        total = max(boards.count(), 1)
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(
                "profile.json",
                _json(
                    {
                        "id": user.pk,
                        "username": user.username,
                        "display_name": user.display_name,
                        "bio": user.bio,
                        "email": user.email,
                        "share_reading": user.share_reading,
                        "date_joined": user.date_joined,
                    }
                ),
            )
            for done, board in enumerate(boards.order_by("id").iterator(chunk_size=ROWS_AT_ONCE), start=1):
                doc = json.loads(board.doc_json)
                archive.writestr(f"boards/{board.pk}.json", board_full_json(board).encode())  # the API's full form
                pictures = images.image_data_uris(images.doc_image_ids(doc))
                archive.writestr(f"boards/{board.pk}.svg", render_svg(doc, title=board.title, images=pictures))
                if done % PROGRESS_EVERY == 0:
                    Export.objects.filter(pk=export.pk).update(progress=min(95, 95 * done // total))
            _write_rows(
                archive,
                "follows.json",
                {
                    "following": Follow.objects.filter(follower=user).values("followee__username", "created_at"),
                    "followers": Follow.objects.filter(followee=user).values("follower__username", "created_at"),
                },
            )
            _write_rows(
                archive, "reads.json", {"reads": Read.objects.filter(reader=user).values("board_id", "read_at")}
            )
            _write_rows(
                archive,
                "likes.json",
                {"likes": Like.objects.filter(user=user).order_by("-created_at").values("board_id", "created_at")},
            )
            _write_rows(
                archive,
                "comments.json",
                {
                    "comments": Comment.objects.filter(author=user)
                    .order_by("id")
                    .values("id", "board_id", "reply_to_id", "text", "created_at", "edited_at", "state")
                },
            )
            for image in Image.objects.filter(owner=user).order_by("created_at").iterator(chunk_size=ROWS_AT_ONCE):
                try:
                    archive.writestr(
                        f"images/{image.pk}.{image.file.rsplit('.', 1)[-1]}", images.image_file_read(image.file)
                    )
                except OSError:  # its copy went missing from the storage: listed in images.json all the same
                    continue
            _write_rows(
                archive,
                "images.json",
                {
                    "images": Image.objects.filter(owner=user)
                    .order_by("created_at")
                    .values("id", "content_type", "width", "height", "size", "state", "created_at")
                },
            )
            _write_rows(
                archive,
                "notifications.json",
                {
                    "notifications": Notification.objects.filter(recipient=user).values(
                        "kind", "board_id", "actor_count", "created_at", "read"
                    )
                },
            )
        os.replace(partial, path)
    except Exception:
        partial.unlink(missing_ok=True)
        Export.objects.filter(pk=export.pk).update(status=Export.Status.FAILED)
        raise
    Export.objects.filter(pk=export.pk).update(
        status=Export.Status.READY,
        progress=100,
        size=path.stat().st_size,
        expires_at=timezone.now() + timedelta(hours=settings.EXPORT_KEEP_HOURS),
    )
    return True


def _write_rows(archive: zipfile.ZipFile, name: str, lists: dict) -> None:
    """One JSON file of named lists, each streamed from its query into the entry."""
    with archive.open(name, "w") as entry:
        entry.write(b"{")
        for index, (key, rows) in enumerate(lists.items()):
            entry.write((", " if index else "").encode() + json.dumps(key).encode() + b": [")
            for n, row in enumerate(rows.iterator(chunk_size=ROWS_AT_ONCE)):
                entry.write((b",\n" if n else b"\n") + json.dumps(row, ensure_ascii=False, default=_plain).encode())
            entry.write(b"\n]")
        entry.write(b"}\n")


def exports_expire(*, now=None) -> int:
    """Delete the archives (files and rows) past their day, and failed ones older than that.
    Returns how many. O(expired)."""
    now = now or timezone.now()
    old = Export.objects.filter(expires_at__lte=now) | Export.objects.filter(
        status=Export.Status.FAILED, created_at__lte=now - timedelta(hours=settings.EXPORT_KEEP_HOURS)
    )
    count = 0
    for export in old:
        if export.file_name:
            export_path(export).unlink(missing_ok=True)
        export.delete()
        count += 1
    return count
