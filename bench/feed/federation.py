"""What a board costs to federate to 10,000 remote followers on 500 servers (issue 39 item 4):

1. online: the board's create call (its transaction, its commit and the on-commit work) for an
   author with no remote follower and for one with 10,000, the median of ``--posts`` each;
2. the walk: the 10,000 follow rows read into 500 deliveries (one per shared inbox), in-process;
3. end to end: from the create call to the 500th signed POST received, through a real Celery
   worker (``--workers`` processes) delivering to a receiver on loopback.

    make bench-federation
    make bench-federation ARGS="--followers 10000 --servers 500 --workers 2"

The followers are real RemoteActor and RemoteFollow rows; the 500 servers are 500 shared inboxes
(one path each) of one HTTP receiver on 127.0.0.1, which answers 202 to every POST without
checking it (the tests check signatures). Every delivery is signed (RSA 2048, draft-cavage).
"""

import argparse
import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import django

from bench.harness.worker import celery_worker

DOC = {
    "width": 200,
    "height": 120,
    "background": "#ffffff",
    "elements": [
        {"type": "rect", "x": 10, "y": 10, "w": 100, "h": 60, "color": "#1f6feb", "fill": "#dbeafe", "width": 2},
        {"type": "text", "x": 20, "y": 40, "text": "to the fediverse", "color": "#000000", "size": 14},
    ],
}


class Receiver:
    """A loopback HTTP server that counts the POSTs it is sent."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with receiver.lock:
                    receiver.count += 1
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--followers", type=int, default=10_000)
    parser.add_argument("--servers", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (--concurrency)")
    parser.add_argument("--posts", type=int, default=5, help="posts measured online")
    args = parser.parse_args()
    # The worker (a child process) reads the same: deliveries to loopback are allowed here only.
    os.environ["FEDERATION_ALLOW_PRIVATE"] = "1"
    os.environ.setdefault("SITE_URL", "http://127.0.0.1:8000")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    measure(**vars(args))


def measure(*, followers: int, servers: int, workers: int, posts: int) -> dict:
    from django.db import transaction
    from django.utils import timezone

    from feeds.federation import delivery
    from feeds.models import FederationActivity, FederationDelivery, RemoteActor, RemoteFollow
    from feeds.services.accounts import account_create
    from feeds.services.boards import board_create
    from social.models import User
    from ugcsite.celery import app

    receiver = Receiver()
    lonely = User.objects.filter(username="fed_lonely").first() or account_create(
        username="fed_lonely", password="bench-password"
    )
    star = User.objects.filter(username="fed_star").first() or account_create(
        username="fed_star", password="bench-password"
    )
    RemoteFollow.objects.filter(followee=star).delete()
    RemoteActor.objects.filter(uri__startswith="https://bench-").delete()
    now = timezone.now()
    actors = [
        RemoteActor(
            uri=f"https://bench-{i % servers}.example/users/u{i}",
            host=f"bench-{i % servers}.example",
            handle=f"u{i}@bench-{i % servers}.example",
            inbox=f"{receiver.base}/s{i % servers}/users/u{i}/inbox",
            shared_inbox=f"{receiver.base}/s{i % servers}/inbox",
            key_id=f"https://bench-{i % servers}.example/users/u{i}#main-key",
            public_pem="-",
            fetched_at=now,
        )
        for i in range(followers)
    ]
    RemoteActor.objects.bulk_create(actors, batch_size=2000)
    ids = RemoteActor.objects.filter(uri__startswith="https://bench-").values_list("pk", flat=True)
    RemoteFollow.objects.bulk_create(
        [RemoteFollow(actor_id=pk, followee=star, activity_id=f"f{pk}") for pk in ids], batch_size=2000
    )
    FederationActivity.objects.all().delete()

    def create(author) -> float:
        started = time.perf_counter()
        with transaction.atomic():
            board_create(author=author, title="Bench board", kind="sketch", tags=["bench"], doc=DOC)
        return (time.perf_counter() - started) * 1000

    results = {}
    app.control.purge()
    for author, name in ((lonely, "no remote follower"), (star, f"{followers:,} remote followers")):
        create(author)  # warm
        times = sorted(create(author) for _ in range(posts))
        results[name] = statistics.median(times)
        print(
            f"online create, {name}: median {results[name]:.1f} ms (of {posts}: {', '.join(f'{t:.1f}' for t in times)})"
        )
    app.control.purge()
    FederationDelivery.objects.all().delete()

    activity = FederationActivity.objects.filter(actor_id=star.pk).order_by("-pk").first()
    FederationActivity.objects.exclude(pk=activity.pk).delete()
    started = time.perf_counter()
    written, after = [], ""
    while after is not None:
        batch, after = delivery.walk_batch(activity.pk, after)
        written += batch
    walk = time.perf_counter() - started
    print(f"walk: {followers:,} followers into {len(written)} deliveries in {walk * 1000:.0f} ms")
    FederationActivity.objects.all().delete()

    with celery_worker("bench-federation", concurrency=workers, ready=app):
        receiver.count = 0
        started = time.perf_counter()
        create(star)
        while receiver.count < servers:
            time.sleep(0.01)
            if time.perf_counter() - started > 300:
                raise SystemExit(f"only {receiver.count} of {servers} deliveries in 5 minutes")
        end_to_end = time.perf_counter() - started
    print(
        f"end to end: {servers} signed deliveries for {followers:,} followers in {end_to_end:.2f} s "
        f"({servers / end_to_end:.0f} deliveries/s, {workers} worker processes)"
    )
    results.update(walk_ms=walk * 1000, end_to_end_s=end_to_end, deliveries=len(written))
    return results


if __name__ == "__main__":
    main()
