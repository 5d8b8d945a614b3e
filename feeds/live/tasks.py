"""Celery tasks of the live boards: compaction into PostgreSQL (feeds.live.compaction)."""

import time

from celery import shared_task
from django.conf import settings

from feeds.live import compaction


@shared_task(acks_late=True)
def live_compact(board_id: int) -> None:
    """Compact one board now (its last editor left), keeping a version if its doc changed."""
    compaction.board_compact(board_id, last_editor_left=True)


@shared_task
def live_compact_due() -> int:
    """Beat: compact the boards dirty for LIVE_COMPACT_SECONDS, the longest waiting first, for
    at most LIVE_COMPACT_BUDGET seconds."""
    return compaction.compact_due(
        older_than=time.time() - settings.LIVE_COMPACT_SECONDS, budget=settings.LIVE_COMPACT_BUDGET
    )
