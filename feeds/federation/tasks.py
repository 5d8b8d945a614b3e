"""Federation's Celery tasks: thin, taking ids (feeds.federation.delivery does the work)."""

from celery import shared_task

from feeds.federation import delivery, services
from feeds.tasks import RETRYING


@shared_task(**RETRYING)
def federation_walk(activity_id: int, after: str = "") -> None:
    """One batch of an activity's inboxes written and each delivery sent; the next batch
    enqueued before this one's deliveries."""
    ids, more = delivery.walk_batch(activity_id, after)
    if more is not None:
        federation_walk.delay(activity_id, more)
    for delivery_id in ids:
        federation_deliver.delay(delivery_id)


@shared_task(**RETRYING)
def federation_deliver(delivery_id: int) -> None:
    """One delivery tried; tried again later (Mastodon's backoff) when it asks to be."""
    wait = delivery.deliver(delivery_id)
    if wait is not None and wait <= delivery.SHORT_WAIT_SECONDS:
        federation_deliver.apply_async((delivery_id,), countdown=wait)
    # a longer wait is kept in the row's next_at: beat's federation_resend sends it when due


@shared_task
def federation_resend() -> None:
    """Beat: walks and deliveries that no task took (the broker was down or lost them)."""
    activities, deliveries = delivery.due()
    for activity_id in activities:
        federation_walk.delay(activity_id)
    for delivery_id in deliveries:
        federation_deliver.delay(delivery_id)


@shared_task(**RETRYING)
def federation_board_update(board_id: int) -> None:
    """The Update of a board edited inside FEDERATION_UPDATE_SECONDS, sent when the window ends."""
    services.board_update_due(board_id)


@shared_task(**RETRYING)
def federation_author_withdrawn(user_id: int) -> None:
    """A suspended person's boards: a Delete of each (their followers elsewhere stop showing them)."""
    services.author_withdrawn(user_id)
