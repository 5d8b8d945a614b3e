"""The soak's clients (`make soak` runs this with locust, headless): a few dozen simulated
people, each request made as a random person of the world that bench/soak.py built.

Mix: ~90% feed reads (GET /api/v1/feed, a quarter of them followed by the next page with
before=), ~5% posts (POST /api/v1/boards with a small valid drawing), ~5% follows and unfollows
(PUT/DELETE /api/v1/users/{name}/follow). Readers and followers are drawn uniformly; whom to
follow, and who posts, are drawn with the world's own Zipf weights (bench.world: popular people
are followed more and post more), so posts reach hundreds of followers on average, not thirty.

Reads SOAK_WORLD (the people, their tokens and whom they follow, as JSON), writes every write it
made to SOAK_WRITES (a JSON line each: time, op, who, whom or the board, status: the soak's
diagnosis of a miss reads it) and what it measured to SOAK_STATS (JSON) when locust quits. Imports nothing of the site: locust patches the
standard library with gevent, and the site's code has no business in this process.
"""

import json
import os
import random
import time
from collections import Counter
from itertools import accumulate

import gevent
from locust import FastHttpUser, between, events, task

WORLD = json.loads(open(os.environ["SOAK_WORLD"]).read())
PEOPLE = WORLD["people"]  # [{"name", "token", "following": [names]}]
RANKED = WORLD["ranked"]  # names, most followed first: follows choose with the same Zipf weights
RANK_WEIGHTS = list(accumulate(1 / (rank + 1) ** 0.9 for rank in range(len(RANKED))))  # follows, as the graph
POST_WEIGHTS = list(accumulate(1 / (rank + 1) ** 0.8 for rank in range(len(RANKED))))  # posts, as grow_boards
BY_NAME = {person["name"]: person for person in PEOPLE}
FOLLOWING = {person["name"]: set(person["following"]) for person in PEOPLE}
KINDS = ["sketch", "diagram", "note", "comic", "map"]
PROGRESS_EVERY = 10.0  # seconds between progress lines

WRITES = open(os.environ["SOAK_WRITES"], "a", buffering=1)
FAILED = Counter()  # by HTTP status, or by exception for a request that got no answer
POSTED = Counter()  # successful creates


def small_doc(rng: random.Random) -> dict:
    points = [[rng.randint(0, 400), rng.randint(0, 300)] for _ in range(rng.randint(2, 6))]
    return {"width": 400, "height": 300, "background": "#ffffff",
            "elements": [{"type": "path", "color": "#1d2330", "width": 3, "points": points},
                         {"type": "rect", "color": "#c0392b", "width": 2, "x": 10, "y": 10, "w": 50, "h": 40}]}


def log_write(op: str, who: str, target, status: int) -> None:
    WRITES.write(json.dumps({"t": time.time(), "op": op, "who": who, "target": target, "status": status}) + "\n")


class Person(FastHttpUser):
    wait_time = between(float(os.environ.get("SOAK_WAIT_MIN", "0.1")), float(os.environ.get("SOAK_WAIT_MAX", "0.5")))

    def on_start(self):
        self.rng = random.Random()

    def _someone(self) -> dict:
        return self.rng.choice(PEOPLE)

    @staticmethod
    def _auth(person: dict) -> dict:
        return {"Authorization": f"Bearer {person['token']}"}

    @task(90)
    def read_feed(self):
        person = self._someone()
        with self.client.get("/api/v1/feed?limit=20", headers=self._auth(person), name="GET /api/v1/feed",
                             catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(f"{answer.status_code}")
                return
            older = answer.json().get("next")
        if older and self.rng.random() < 0.25:
            self.client.get(f"/api/v1/feed?limit=20&before={older}", headers=self._auth(person),
                            name="GET /api/v1/feed?before=")

    @task(5)
    def post_board(self):
        person = BY_NAME[self.rng.choices(RANKED, cum_weights=POST_WEIGHTS)[0]]
        body = {"title": f"soak {self.rng.randrange(10**6)}", "kind": self.rng.choice(KINDS),
                "tags": ["soak"], "doc": small_doc(self.rng)}
        with self.client.post("/api/v1/boards", json=body, headers=self._auth(person), name="POST /api/v1/boards",
                              catch_response=True) as answer:
            if answer.status_code == 201:
                POSTED["boards"] += 1
                log_write("post", person["name"], int(answer.json()["id"]), 201)
            else:
                answer.failure(f"{answer.status_code}")

    @task(5)
    def follow_or_unfollow(self):
        person = self._someone()
        mine = FOLLOWING[person["name"]]
        if mine and self.rng.random() < 0.5:
            other = self.rng.choice(sorted(mine))
            mine.discard(other)  # this process's idea of the graph, good enough to pick whom to drop
            answer = self.client.delete(f"/api/v1/users/{other}/follow", headers=self._auth(person),
                                        name="DELETE /api/v1/users/{name}/follow")
            log_write("unfollow", person["name"], other, answer.status_code)
        else:
            other = self.rng.choices(RANKED, cum_weights=RANK_WEIGHTS)[0]
            if other == person["name"]:
                return
            mine.add(other)
            answer = self.client.put(f"/api/v1/users/{other}/follow", headers=self._auth(person),
                                     name="PUT /api/v1/users/{name}/follow")
            log_write("follow", person["name"], other, answer.status_code)


@events.request.add_listener
def count_failure(response=None, exception=None, **_):
    if exception is None:
        return
    status = getattr(response, "status_code", 0) or 0
    FAILED[str(status) if status else f"no answer ({type(exception).__name__}: {str(exception)[:60]})"] += 1


def _figures(stats) -> dict:
    total = stats.total

    def entry(s) -> dict:
        return {"requests": s.num_requests, "failures": s.num_failures,
                "p50_ms": s.get_response_time_percentile(0.5) if s.num_requests else None,
                "p99_ms": s.get_response_time_percentile(0.99) if s.num_requests else None,
                "mean_ms": s.avg_response_time if s.num_requests else None}

    seconds = max((total.last_request_timestamp or 0) - total.start_time, 1e-9) if total.num_requests else 0
    return {**entry(total), "seconds": seconds, "rps": total.num_requests / seconds if seconds else 0,
            "failures_by_status": dict(FAILED), "posts": POSTED["boards"],
            "by_name": {f"{s.name}": entry(s) for s in stats.entries.values()}}


def _progress(environment):
    started = time.monotonic()
    while True:
        gevent.sleep(PROGRESS_EVERY)
        total = environment.stats.total
        p50 = total.get_response_time_percentile(0.5) if total.num_requests else 0
        p99 = total.get_response_time_percentile(0.99) if total.num_requests else 0
        print(f"  soak {time.monotonic() - started:5.0f} s: {total.num_requests:,} requests, "
              f"{total.num_failures:,} failed, {total.current_rps:,.0f} req/s now, p50 {p50:.0f} ms, p99 {p99:.0f} ms, "
              f"{POSTED['boards']:,} boards posted", flush=True)


@events.test_start.add_listener
def start_progress(environment, **_):
    gevent.spawn(_progress, environment)


@events.quitting.add_listener
def write_figures(environment, **_):
    with open(os.environ["SOAK_STATS"], "w") as out:
        json.dump(_figures(environment.stats), out, indent=1)
