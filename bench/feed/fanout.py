"""One post by an author with N followers, end to end through a real Celery worker:
from the create call (enqueue) to the moment the last follower's home timeline holds it.

    make bench-fanout                     # 100,000 followers
    make bench-fanout ARGS="--followers 10000 --workers 2"

The followers are real rows in PostgreSQL and real F/following sets in Redis; the worker is a
real `celery worker` process with the site's settings (FANOUT_BATCH_SIZE batches).
This measures push: F is written here directly, so the author is never recounted and stays
pushed whatever FANOUT_PUSH_MAX_FOLLOWERS says (on the site an author past it is merged at read
time instead; `make bench-hybrid` measures that side).
"""

import argparse
import time

import django

from bench.harness.worker import celery_worker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (--concurrency)")
    parser.add_argument("--posts", type=int, default=3, help="posts measured (the first warms up)")
    args = parser.parse_args()
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    measure(followers=args.followers, workers=args.workers, posts=args.posts)


def measure(*, followers: int, workers: int = 2, posts: int = 3) -> dict:
    """One author with ``followers`` followers posts ``posts`` boards; each is timed from the
    create call to the moment the last follower's P holds it, through a real Celery worker.
    Returns deliveries per second (mean of the posts after the first)."""
    from types import SimpleNamespace

    args = SimpleNamespace(followers=followers, workers=workers, posts=posts)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone
    from tqdm import tqdm

    from feeds import keys
    from feeds.services.boards import board_create
    from social import graph, keys as social_keys
    from social.models import Follow
    from ugcsite.celery import app
    from ugcsite.platform.redis import get_redis

    User = get_user_model()
    redis = get_redis()
    star, _ = User.objects.get_or_create(username="star")
    have = User.objects.filter(username__startswith="fan_").count()
    now = timezone.now()
    with tqdm(total=args.followers, initial=have, desc="followers", unit="user") as bar:
        for start in range(have, args.followers, 5000):
            stop = min(start + 5000, args.followers)
            fans = User.objects.bulk_create([User(username=f"fan_{i}", password="!") for i in range(start, stop)])
            Follow.objects.bulk_create([Follow(follower=fan, followee=star, created_at=now) for fan in fans])
            pipe = redis.pipeline(transaction=False)
            for fan in fans:
                graph.follow_add(follower_id=fan.pk, followee_id=star.pk, at=time.time(), pipe=pipe)
                pipe.set(keys.active(fan.pk), 1, ex=3600)  # active readers: fan-out skips idle ones
            pipe.execute()
            bar.update(stop - start)
    followers_key = social_keys.followers(star.pk)
    last_fan = int(redis.zrevrange(followers_key, 0, 0)[0])  # the walk reaches it last
    print(
        f"{redis.zcard(followers_key):,} followers in F; batch size {settings.FANOUT_BATCH_SIZE}; "
        f"{args.workers} worker process(es)"
    )

    with celery_worker("bench", concurrency=args.workers, ready=app):
        doc = {"width": 10, "height": 10, "background": "#ffffff", "elements": []}
        rates = []
        for n in range(args.posts):
            started = time.perf_counter()
            with transaction.atomic():
                board = board_create(author=star, title=f"post {n}", kind="note", tags=[], doc=doc)
            target = keys.home_timeline(last_fan)
            while redis.zscore(target, board.id) is None:
                time.sleep(0.002)
            elapsed = time.perf_counter() - started
            rate = args.followers / elapsed
            label = "warm-up" if n == 0 else "measured"
            print(f"post {n} ({label}): {args.followers:,} deliveries in {elapsed:.3f} s = {rate:,.0f} per second")
            if n:
                rates.append(rate)
        missing = sum(
            1
            for fan_id in User.objects.filter(username__startswith="fan_").values_list("id", flat=True)[:2000]
            if redis.zscore(keys.home_timeline(fan_id), board.id) is None
        )
        print(f"spot check: {missing} of the first 2,000 followers lack the last post")
        mean = sum(rates) / len(rates) if rates else 0
        if rates:
            print(f"fan-out: {mean:,.0f} deliveries per second on average")
        return {
            "followers": args.followers,
            "rate": mean,
            "seconds": args.followers / mean if mean else None,
            "missing": missing,
        }


if __name__ == "__main__":
    main()
