"""The soak's HTTP clients (`make soak` runs this with locust, headless): a few dozen simulated
people, each request made as a person of the world that bench/serving/soak.py built. Three kinds of
client, in the proportion of their weights (3 : 1 : 1 of SOAK_CLIENTS):

Person, the API (bearer tokens), each request as a random person: ~90% feed reads
(GET /api/v1/feed, a quarter of them followed by the next page with before=), ~5% posts
(POST /api/v1/boards with a small valid drawing), ~5% follows and unfollows
(PUT/DELETE /api/v1/users/{name}/follow). Readers and followers are drawn uniformly; whom to
follow, and who posts, are drawn with the world's own Zipf weights (bench.harness.world: popular people
are followed more and post more), so posts reach hundreds of followers on average, not thirty.
The /ws/me listeners of bench/live/soak.py never follow or unfollow here, so whose boards must
reach them stays fixed for the whole run.

Visitor, the HTML pages signed out: the front page, /discover, /popular, a profile, a board,
the login page, and /new, which must send them to /login?next=/new.

Member, the HTML pages signed in: logs in through the login page as a browser does (the form,
its CSRF token and cookie, the Origin header) as someone holding the world's password, then
reads the home feed (/), profiles, boards, /discover, /notifications and follower lists; now and
then logs out (POST /logout with the CSRF token) and in again as someone else.

Every page must answer 200 signed in or out as expected (data-signed-in on <body>), or the
expected redirect; redirects are never followed, so a page that sends a member to the login page
is a failure, not a 200 from the login page.

Reads SOAK_WORLD (the people, their tokens and whom they follow, as JSON), writes every write it
made to SOAK_WRITES (a JSON line each: time, op, who, whom or the board, status: the soak's
diagnosis of a miss reads it), its running figures to SOAK_PROGRESS every few seconds
(bench/serving/soak.py prints them with its samples) and what it measured to SOAK_STATS (JSON) when locust quits. Imports nothing of the
site: locust patches the standard library with gevent, and the site's code has no business in
this process.
"""

import json
import os
import random
import re
import time
from collections import Counter
from itertools import accumulate
from urllib.parse import urlencode

import gevent
from locust import FastHttpUser, between, events, task

WORLD = json.loads(open(os.environ["SOAK_WORLD"]).read())
PEOPLE = WORLD["people"]  # [{"name", "token", "following": [names]}]
RANKED = WORLD["ranked"]  # names, most followed first: follows choose with the same Zipf weights
RANK_WEIGHTS = list(accumulate(1 / (rank + 1) ** 0.9 for rank in range(len(RANKED))))  # follows, as the graph
POST_WEIGHTS = list(accumulate(1 / (rank + 1) ** 0.8 for rank in range(len(RANKED))))  # posts, as grow_boards
BY_NAME = {person["name"]: person for person in PEOPLE}
FOLLOWING = {person["name"]: set(person["following"]) for person in PEOPLE}
LISTENERS = set(WORLD["listeners"])  # on /ws/me (bench/live/soak.py): their follows stay as built
FOLLOWERS = [person for person in PEOPLE if person["name"] not in LISTENERS]  # who may follow and unfollow
MEMBERS = WORLD["members"]  # names of the people holding PASSWORD: they can log in on the pages
PASSWORD = WORLD["password"]
BOARD_SAMPLE = WORLD["board_sample"]  # ids of published boards, for the board pages
CSRF_FIELD = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SIGNED_IN = "data-signed-in"  # on <body> of every page when signed in (templates/base.html)
RELOGIN_EVERY = 200  # pages, on average, before a member logs out and in as someone else
KINDS = ["sketch", "diagram", "note", "comic", "map"]
PROGRESS_EVERY = 5.0  # seconds between rewrites of SOAK_PROGRESS

WRITES = open(os.environ["SOAK_WRITES"], "a", buffering=1)
FAILED = Counter()  # by HTTP status, or by exception for a request that got no answer
POSTED = Counter()  # successful creates


def small_doc(rng: random.Random) -> dict:
    points = [[rng.randint(0, 400), rng.randint(0, 300)] for _ in range(rng.randint(2, 6))]
    return {
        "width": 400,
        "height": 300,
        "background": "#ffffff",
        "elements": [
            {"type": "path", "color": "#1d2330", "width": 3, "points": points},
            {"type": "rect", "color": "#c0392b", "width": 2, "x": 10, "y": 10, "w": 50, "h": 40},
        ],
    }


def log_write(op: str, who: str, target, status: int) -> None:
    WRITES.write(json.dumps({"t": time.time(), "op": op, "who": who, "target": target, "status": status}) + "\n")


WAIT = between(float(os.environ.get("SOAK_WAIT_MIN", "0.1")), float(os.environ.get("SOAK_WAIT_MAX", "0.5")))


class Person(FastHttpUser):
    weight = 3
    wait_time = WAIT

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
        with self.client.get(
            "/api/v1/feed?limit=20", headers=self._auth(person), name="GET /api/v1/feed", catch_response=True
        ) as answer:
            if answer.status_code != 200:
                answer.failure(f"{answer.status_code}")
                return
            older = answer.json().get("next")
        if older and self.rng.random() < 0.25:
            self.client.get(
                f"/api/v1/feed?limit=20&before={older}", headers=self._auth(person), name="GET /api/v1/feed?before="
            )

    @task(5)
    def post_board(self):
        person = BY_NAME[self.rng.choices(RANKED, cum_weights=POST_WEIGHTS)[0]]
        body = {
            "title": f"soak {self.rng.randrange(10**6)}",
            "kind": self.rng.choice(KINDS),
            "tags": ["soak"],
            "doc": small_doc(self.rng),
        }
        with self.client.post(
            "/api/v1/boards", json=body, headers=self._auth(person), name="POST /api/v1/boards", catch_response=True
        ) as answer:
            if answer.status_code == 201:
                POSTED["boards"] += 1
                log_write("post", person["name"], int(answer.json()["id"]), 201)
            else:
                answer.failure(f"{answer.status_code}")

    @task(5)
    def follow_or_unfollow(self):
        person = self.rng.choice(FOLLOWERS)
        mine = FOLLOWING[person["name"]]
        if mine and self.rng.random() < 0.5:
            other = self.rng.choice(sorted(mine))
            mine.discard(other)  # this process's idea of the graph, good enough to pick whom to drop
            answer = self.client.delete(
                f"/api/v1/users/{other}/follow", headers=self._auth(person), name="DELETE /api/v1/users/{name}/follow"
            )
            log_write("unfollow", person["name"], other, answer.status_code)
        else:
            other = self.rng.choices(RANKED, cum_weights=RANK_WEIGHTS)[0]
            if other == person["name"]:
                return
            mine.add(other)
            answer = self.client.put(
                f"/api/v1/users/{other}/follow", headers=self._auth(person), name="PUT /api/v1/users/{name}/follow"
            )
            log_write("follow", person["name"], other, answer.status_code)


class Browser(FastHttpUser):
    """What both page clients share: a page fetched without following redirects, checked."""

    abstract = True
    wait_time = WAIT
    signed_in = False

    def on_start(self):
        self.rng = random.Random()

    def page(self, path: str, name: str, *, expect: int = 200, location: str | None = None):
        """GET a page; a failure unless it answers ``expect`` (with Location ``location`` for a
        redirect) and, for a 200, shows the visitor signed in or out as this client is."""
        with self.client.get(path, name=name, allow_redirects=False, catch_response=True) as answer:
            if answer.status_code != expect:
                answer.failure(f"{answer.status_code}")
            elif location is not None and answer.headers.get("Location") != location:
                answer.failure(f"redirect to {answer.headers.get('Location')}, not {location}")
            elif expect == 200 and (SIGNED_IN in (answer.text or "")) != self.signed_in:
                answer.failure(
                    "the page shows no one signed in" if self.signed_in else "the page shows someone signed in"
                )
            return answer

    def _someone_to_see(self) -> str:
        return self.rng.choices(RANKED, cum_weights=RANK_WEIGHTS)[0]

    def _board(self) -> int:
        return self.rng.choice(BOARD_SAMPLE)


class Visitor(Browser):
    weight = 1

    @task(30)
    def front_page(self):
        self.page("/", "page / (signed out)")

    @task(15)
    def discover(self):
        self.page("/discover", "page /discover (signed out)")

    @task(10)
    def popular(self):
        self.page("/popular", "page /popular (signed out)")

    @task(20)
    def profile(self):
        self.page(f"/u/{self._someone_to_see()}", "page /u/{name} (signed out)")

    @task(20)
    def board(self):
        self.page(f"/b/{self._board()}", "page /b/{id} (signed out)")

    @task(3)
    def login_page(self):
        self.page("/login", "page /login (signed out)")

    @task(2)
    def editor_needs_login(self):
        self.page("/new", "page /new (signed out: to /login)", expect=302, location="/login?next=/new")


class Member(Browser):
    weight = 1
    signed_in = True

    def on_start(self):
        super().on_start()
        self.log_in()

    def _csrf(self, answer) -> str | None:
        found = CSRF_FIELD.search(answer.text or "")
        return found.group(1) if found else None

    def _form(self, path: str, fields: dict, name: str, *, location: str):
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": self.host,
            "Referer": self.host + path,
        }
        with self.client.post(
            path, data=urlencode(fields), headers=headers, name=name, allow_redirects=False, catch_response=True
        ) as answer:
            if answer.status_code != 302 or answer.headers.get("Location") != location:
                answer.failure(f"{answer.status_code} to {answer.headers.get('Location')}")
                return False
            return True

    def log_in(self):
        self.signed_in = False
        self.name = self.rng.choice(MEMBERS)
        form = Browser.page(self, "/login", "page /login (signed out)")
        token = self._csrf(form)
        if token is None:
            return
        if self._form(
            "/login",
            {"username": self.name, "password": PASSWORD, "csrfmiddlewaretoken": token},
            "POST /login (the form)",
            location="/",
        ):
            self.signed_in = True

    def log_out_and_in(self):
        token = self._csrf(Browser.page(self, "/logout", "page /logout (signed in)"))
        if token is not None and self._form(
            "/logout", {"csrfmiddlewaretoken": token}, "POST /logout (the form)", location="/"
        ):
            self.signed_in = False
            self.log_in()

    def page(self, path, name, **kwargs):
        if self.signed_in and self.rng.random() < 1 / RELOGIN_EVERY:
            self.log_out_and_in()
        if not self.signed_in:
            self.log_in()  # the log-in failed (counted): try again before the next page
            if not self.signed_in:
                return None
        return super().page(path, name, **kwargs)

    @task(30)
    def home_feed(self):
        self.page("/", "page / (signed in: the home feed)")

    @task(20)
    def profile(self):
        self.page(f"/u/{self._someone_to_see()}", "page /u/{name} (signed in)")

    @task(25)
    def board(self):
        self.page(f"/b/{self._board()}", "page /b/{id} (signed in)")

    @task(10)
    def discover(self):
        self.page("/discover", "page /discover (signed in)")

    @task(5)
    def notifications(self):
        self.page("/notifications", "page /notifications (signed in)")

    @task(5)
    def followers(self):
        self.page(f"/u/{self._someone_to_see()}/followers", "page /u/{name}/followers (signed in)")


@events.request.add_listener
def count_failure(response=None, exception=None, **_):
    if exception is None:
        return
    status = getattr(response, "status_code", 0) or 0
    if not status:
        FAILED[f"no answer ({type(exception).__name__}: {str(exception)[:60]})"] += 1
    else:  # the status alone, or with what was wrong with an answer whose status was right
        FAILED[str(status) if str(exception) == str(status) else f"{status}: {str(exception)[:60]}"] += 1


def _figures(stats) -> dict:
    total = stats.total

    def entry(s) -> dict:
        return {
            "requests": s.num_requests,
            "failures": s.num_failures,
            "p50_ms": s.get_response_time_percentile(0.5) if s.num_requests else None,
            "p99_ms": s.get_response_time_percentile(0.99) if s.num_requests else None,
            "mean_ms": s.avg_response_time if s.num_requests else None,
        }

    seconds = max((total.last_request_timestamp or 0) - total.start_time, 1e-9) if total.num_requests else 0
    return {
        **entry(total),
        "seconds": seconds,
        "rps": total.num_requests / seconds if seconds else 0,
        "failures_by_status": dict(FAILED),
        "posts": POSTED["boards"],
        "by_name": {f"{s.name}": entry(s) for s in stats.entries.values()},
    }


def _progress(environment):
    """The running figures, for bench/serving/soak.py's progress line (it prints them with its samples)."""
    while True:
        gevent.sleep(PROGRESS_EVERY)
        total = environment.stats.total
        figures = {
            "requests": total.num_requests,
            "failures": total.num_failures,
            "rps_now": total.current_rps,
            "p50_ms": total.get_response_time_percentile(0.5) if total.num_requests else 0,
            "p99_ms": total.get_response_time_percentile(0.99) if total.num_requests else 0,
            "posts": POSTED["boards"],
        }
        with open(os.environ["SOAK_PROGRESS"], "w") as out:
            json.dump(figures, out)


@events.test_start.add_listener
def start_progress(environment, **_):
    gevent.spawn(_progress, environment)


@events.quitting.add_listener
def write_figures(environment, **_):
    with open(os.environ["SOAK_STATS"], "w") as out:
        json.dump(_figures(environment.stats), out, indent=1)
