"""Beat tasks of social reading: thin, each calls one function."""

from celery import shared_task

from social import reading


@shared_task
def reads_flush() -> int:
    """Beat: the buffered reads into PostgreSQL."""
    return reading.reads_flush()


@shared_task
def reads_prune() -> int:
    """Beat: stored reads past the retention window out of PostgreSQL."""
    return reading.reads_prune()
