"""Deliveries to remote inboxes (docs/federation.md, "Delivery"), Mastodon's model in Celery.

1. ``activity_add`` writes a FederationActivity in the change's own transaction (the
   transactional outbox: a lost broker loses nothing; beat's ``resend_due`` walks what no task
   walked). O(1) online, whatever the followers.
2. ``walk_batch`` (a task) reads the distinct inboxes of the author's remote followers, a shared
   inbox once for all of its server's followers, FEDERATION_WALK_BATCH at a time, and writes a
   FederationDelivery per inbox. 10,000 followers on 500 servers make 500 deliveries.
3. ``deliver`` (a task per delivery) signs the POST (draft-cavage, rsa-sha256 over
   ``(request-target) host date digest``) and sends it. A 2xx ends it; a 4xx other than 401, 408
   and 429 (or a 501) drops it; anything else is tried again after ``n^4 + 15`` seconds and some
   jitter, FEDERATION_DELIVERY_ATTEMPTS times in all. An inbox failing
   FEDERATION_BREAKER_FAILURES times in a row is left alone for FEDERATION_BREAKER_SECONDS (its
   deliveries wait, without spending a try); a host that failed on FEDERATION_FAILURE_DAYS
   distinct days is skipped until a delivery there succeeds; a blocked host gets nothing.
"""

import json
import logging
import random
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Func, Value
from django.db.models.functions import Coalesce, NullIf
from django.utils import timezone
from django.utils.module_loading import import_string
from kombu.exceptions import OperationalError as BrokerUnreachable

from feeds import keys
from feeds.federation import actors, documents, remote, signatures
from feeds.federation.http import ACTIVITY_JSON, FetchFailed, host_of, request
from feeds.models import Board, FederatedHost, FederationActivity, FederationDelivery, RemoteBlock, RemoteFollow
from ugcsite.platform.redis import get_redis

logger = logging.getLogger(__name__)
# Retries waiting up to this long go to the broker as a countdown (their row leased meanwhile);
# longer ones wait in PostgreSQL (next_at) for beat, as the broker's visibility timeout would
# hand a far countdown out twice.
SHORT_WAIT_SECONDS = 60
WALK_TASK = "feeds.federation.tasks.federation_walk"  # by name: the tasks module imports this one


def enabled() -> bool:
    return settings.FEDERATION_ENABLED


CREATE, UPDATE = "create", "update"


def has_remote_followers(user_id: int) -> bool:
    """One indexed EXISTS on RemoteFollow."""
    return RemoteFollow.objects.filter(followee_id=user_id).exists()


def activity_add(
    *,
    owner_user,
    body: dict,
    inboxes: list[str] | None = None,
    to_followers: bool = True,
    board_id: int | None = None,
    verb: str = "",
) -> None:
    """Note that ``body`` must reach ``owner_user``'s remote followers (and ``inboxes``), in the
    caller's transaction; on commit a task walks it. One insert. Nothing when federation is off,
    or (for followers only) when the person has no remote follower (one indexed EXISTS)."""
    if not enabled():
        return
    if to_followers and not inboxes and not has_remote_followers(owner_user.pk):
        return
    row = FederationActivity.objects.create(
        actor_owner=actors.owner_of(owner_user.pk),
        actor_id=owner_user.pk,
        body=json.dumps(body, separators=(",", ":")),
        inboxes=list(inboxes or []),
        to_followers=to_followers,
        board_id=board_id,
        verb=verb,
        queued_at=timezone.now(),
    )
    transaction.on_commit(lambda: send(WALK_TASK, row.pk))


def send(task: str, *args, countdown: float | None = None) -> None:
    """Enqueue ``task``; with the broker unreachable, leave it to beat's ``due``."""
    try:
        # By name: feeds.federation.tasks imports this module.
        import_string(task).apply_async(args=args, countdown=countdown)
    except BrokerUnreachable as error:
        logger.warning("%s%s not sent (the broker is unreachable: %s); beat sends it again", task, args, error)


def inboxes_of(user_id: int, *, after: str, limit: int) -> list[str]:
    """The distinct delivery inboxes (shared where there is one) of ``user_id``'s remote
    followers, in order after ``after``, ``limit`` of them; none of a blocked host, none of
    an actor the person blocked. Offline: O(followers) for the whole walk."""
    blocked_hosts = FederatedHost.objects.filter(blocked=True).values("host")
    blocked_actors = RemoteBlock.objects.filter(blocker_id=user_id).values("actor_id")
    inbox = Coalesce(NullIf("actor__shared_inbox", Value("")), "actor__inbox")
    return list(
        RemoteFollow.objects.filter(followee_id=user_id)
        .exclude(actor__host__in=blocked_hosts)
        .exclude(actor_id__in=blocked_actors)
        .annotate(target=inbox)
        .filter(target__gt=after)
        .order_by("target")
        .values_list("target", flat=True)
        .distinct()[:limit]
    )


def walk_batch(activity_id: int, after: str = "") -> tuple[list[int], str | None]:
    """Write the deliveries of one batch of the activity's inboxes: (their ids, where the next
    batch starts, or None when this was the last). Idempotent (one row per activity and inbox)."""
    activity = FederationActivity.objects.filter(pk=activity_id).first()
    if activity is None:
        return [], None
    if activity.board_id is not None and not after and not _board_body(activity):
        FederationActivity.objects.filter(pk=activity_id).delete()
        return [], None  # the board left before its activity did: nothing of it goes out
    targets = list(activity.inboxes) if not after else []
    more = None
    if activity.to_followers:
        batch = inboxes_of(activity.actor_id, after=after, limit=settings.FEDERATION_WALK_BATCH)
        targets += batch
        if len(batch) == settings.FEDERATION_WALK_BATCH:
            more = batch[-1]
    lease = timezone.now() + timedelta(seconds=settings.OUTBOX_RESEND_AFTER_SECONDS)
    rows = [
        FederationDelivery(activity_id=activity_id, inbox=inbox, host=host_of(inbox), next_at=lease)
        for inbox in dict.fromkeys(targets)
    ]
    FederationDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    ids = list(
        FederationDelivery.objects.filter(
            activity_id=activity_id, inbox__in=[r.inbox for r in rows], attempts=0
        ).values_list("pk", flat=True)
    )
    if more is None:
        FederationActivity.objects.filter(pk=activity_id).update(walked=True)
        if not FederationDelivery.objects.filter(activity_id=activity_id).exists():
            FederationActivity.objects.filter(pk=activity_id).delete()
    return ids, more


def _board_body(activity: FederationActivity) -> bool:
    """Build a board's Create or Update again from the board as it stands, its picture rendered
    here (in Celery) when it is not yet: False when the board is no longer published."""
    board = Board.objects.select_related("author").filter(pk=activity.board_id, state=Board.State.PUBLISHED).first()
    if board is None:
        return False
    build = documents.create if activity.verb == CREATE else documents.update
    activity.body = json.dumps(build(board, picture=actors.picture_of(board)), separators=(",", ":"))
    FederationActivity.objects.filter(pk=activity.pk).update(body=activity.body)
    return True


def retry_after(attempt: int) -> float:
    """Mastodon's (Sidekiq's) backoff: the ``attempt``-th retry waits attempt^4 + 15 seconds plus
    a jitter of up to 10 * (attempt + 1) seconds."""
    return attempt**4 + 15 + random.uniform(0, 10 * (attempt + 1))


def retryable(status: int) -> bool:
    return status >= 500 and status != 501 or status in (401, 408, 429)


def _host_skipped(host: str) -> bool:
    """Blocked (or a domain above it is), or failing on too many days. Two indexed reads."""
    if remote.host_blocked(host):
        return True
    days = FederatedHost.objects.filter(host=host).values_list("failure_days", flat=True).first()
    return days is not None and len(days) >= settings.FEDERATION_FAILURE_DAYS


def _host_failed(host: str) -> None:
    today = timezone.now().date()
    row, _ = FederatedHost.objects.get_or_create(host=host)
    if today not in row.failure_days:
        FederatedHost.objects.filter(host=host).update(
            failure_days=Func("failure_days", Value(today), function="array_append")
        )


def _host_succeeded(host: str) -> None:
    FederatedHost.objects.filter(host=host).exclude(failure_days=[]).update(failure_days=[])


def breaker_open(inbox: str) -> bool:
    return bool(get_redis().exists(keys.inbox_open(inbox)))


def _breaker_failure(inbox: str) -> None:
    redis = get_redis()
    failures = redis.incr(keys.inbox_failures(inbox))
    redis.expire(keys.inbox_failures(inbox), 24 * 3600)
    if failures >= settings.FEDERATION_BREAKER_FAILURES:
        redis.set(keys.inbox_open(inbox), 1, ex=settings.FEDERATION_BREAKER_SECONDS)
        redis.delete(keys.inbox_failures(inbox))


def _breaker_success(inbox: str) -> None:
    get_redis().delete(keys.inbox_failures(inbox))


def sign_post(activity: FederationActivity, url: str, body: bytes) -> dict:
    key = actors.key_for(activity.actor_owner)
    username = json.loads(activity.body).get("actor", "")
    key_id = (username if isinstance(username, str) else "") + "#main-key"
    return signatures.cavage_sign(private_pem=key.private_pem, key_id=key_id, method="POST", url=url, body=body)


def deliver(delivery_id: int) -> float | None:
    """Try one delivery: None when it is done (sent, dropped, or gone), else the seconds until
    it should be tried again (the task schedules it). One POST at most."""
    row = FederationDelivery.objects.select_related("activity").filter(pk=delivery_id).first()
    if row is None:
        return None
    if _host_skipped(row.host):
        _finish(row, "skipped: the host is blocked or has failed on too many days")
        return None
    if breaker_open(row.inbox):
        wait = settings.FEDERATION_BREAKER_SECONDS + random.uniform(0, 10)
        FederationDelivery.objects.filter(pk=row.pk).update(next_at=timezone.now() + timedelta(seconds=wait))
        return wait
    body = row.activity.body.encode()
    try:
        answer = request(
            "POST",
            row.inbox,
            headers={"Content-Type": ACTIVITY_JSON, "Accept": ACTIVITY_JSON},
            body=body,
            sign=lambda method, url, data: sign_post(row.activity, url, data),
        )
        status, error, again = answer.status, f"answered {answer.status}", retryable(answer.status)
    except FetchFailed as failure:
        status, error, again = None, str(failure)[:500], failure.retry
    if status is not None and 200 <= status < 300:
        _breaker_success(row.inbox)
        _host_succeeded(row.host)
        _finish(row, "")
        return None
    _breaker_failure(row.inbox)
    _host_failed(row.host)
    attempts = row.attempts + 1
    if not again or attempts >= settings.FEDERATION_DELIVERY_ATTEMPTS:
        _finish(row, f"given up after {attempts} tries: {error}")
        return None
    wait = retry_after(attempts)
    lease = settings.OUTBOX_RESEND_AFTER_SECONDS if wait <= SHORT_WAIT_SECONDS else 0
    FederationDelivery.objects.filter(pk=row.pk).update(
        attempts=attempts, last_error=error[:500], next_at=timezone.now() + timedelta(seconds=wait + lease)
    )
    return wait


def _finish(row: FederationDelivery, error: str) -> None:
    """A delivery done (``error`` says why it ended unsent, "" when sent); its activity goes with
    its last delivery once walked. Three indexed statements."""
    if error:
        logger.info("delivery %s to %s ended unsent: %s", row.pk, row.inbox, error)
    FederationDelivery.objects.filter(pk=row.pk).delete()
    if not FederationDelivery.objects.filter(activity_id=row.activity_id).exists():
        FederationActivity.objects.filter(pk=row.activity_id, walked=True).delete()


def due(*, limit: int = 1000) -> tuple[list[int], list[int]]:
    """What beat sends: activities no walk took within OUTBOX_RESEND_AFTER_SECONDS (the broker
    was down), and deliveries whose next try is due (a retry's long wait is kept here, not in the
    broker, whose visibility timeout would deliver a far countdown twice). Each is leased for
    OUTBOX_RESEND_AFTER_SECONDS so it is not sent twice meanwhile. Two indexed range reads."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=settings.OUTBOX_RESEND_AFTER_SECONDS)
    activities = list(
        FederationActivity.objects.filter(walked=False, queued_at__lt=cutoff).values_list("pk", flat=True)[:limit]
    )
    FederationActivity.objects.filter(pk__in=activities).update(queued_at=now)
    deliveries = list(FederationDelivery.objects.filter(next_at__lte=now).values_list("pk", flat=True)[:limit])
    lease = now + timedelta(seconds=settings.OUTBOX_RESEND_AFTER_SECONDS)
    FederationDelivery.objects.filter(pk__in=deliveries).update(next_at=lease)
    return activities, deliveries
