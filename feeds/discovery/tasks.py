"""Beat tasks of discovery: thin, each calls one function."""

from celery import shared_task

from feeds.discovery import counters, trending


@shared_task
def trending_rollup() -> int:
    """Beat: the trending order from the last 24 hours of views."""
    return trending.trending_rollup()


@shared_task
def views_flush() -> int:
    """Beat: pending view counts into PostgreSQL."""
    return counters.views_flush()


@shared_task
def view_history_prune() -> int:
    """Beat: hourly view counts past the trending window out of PostgreSQL."""
    return counters.view_history_prune()
