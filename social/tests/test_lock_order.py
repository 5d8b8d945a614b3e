"""Writes that lock several people's rows take them lowest id first: two people following and
unfollowing each other at once, and the minutely last-seen copy beside them, never deadlock
(a soak saw a follow answer 503 "deadlock detected" beside the copy)."""

import threading
import time

from django.db import connection

from feeds.timelines import store
from feeds.timelines.activity import last_seen_flush
from social.models import User
from social.services import follow_create, follow_delete, user_create

ROUNDS = 150


def test_follows_both_ways_and_the_last_seen_copy_never_deadlock(transactional_db):
    ann, bob = (user_create(username=name, password="long-enough") for name in ("ann", "bob"))
    others = [User.objects.create(username=f"someone{i}") for i in range(200)]
    failures: list[BaseException] = []

    def run(work) -> None:
        try:
            for _ in range(ROUNDS):
                work()
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    def ann_follows_bob() -> None:
        follow_create(follower=ann, followee=bob)
        follow_delete(follower=ann, followee=bob)

    def bob_follows_ann() -> None:
        follow_create(follower=bob, followee=ann)
        follow_delete(follower=bob, followee=ann)

    def copy_last_seen() -> None:  # everyone seen again: the copy updates all their rows each time
        now = time.time()
        for person in (*others, ann, bob):
            store.home_touch(person.pk, now=now)
        last_seen_flush(now=now)

    threads = [
        threading.Thread(target=run, args=(work,)) for work in (ann_follows_bob, bob_follows_ann, copy_last_seen)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a writer hung"
    assert not failures, failures[:3]
    ann.refresh_from_db()
    bob.refresh_from_db()
    assert (ann.followers_count, ann.following_count, bob.followers_count, bob.following_count) == (0, 0, 0, 0)
