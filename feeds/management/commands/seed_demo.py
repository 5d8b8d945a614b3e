import random

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from feeds.demo import drawing
from feeds.services.accounts import account_create
from feeds.services.boards import board_create, board_remix
from feeds.services.follows import follow_create
from feeds.services.likes import like
from social.services import two_factor_seed

DEMO_PASSWORD = "demo-password"
STAFF = ("admin", "admin-password")
# The demo admin's two-factor key (staff need a second factor at /admin/): `make otp USER=admin`
# prints its current code, or any authenticator app given this key.
STAFF_OTP_SECRET = "UGCSITEDEMOADMINTWOFACTORSECRETX"
PEOPLE = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
# Who follows whom: everyone follows alice; a ring; a few extra edges.
FOLLOWS = (
    [(p, "alice") for p in PEOPLE if p != "alice"]
    + [(a, b) for a, b in zip(PEOPLE, PEOPLE[1:] + PEOPLE[:1]) if b != "alice"]
    + [("alice", "bob"), ("alice", "carol"), ("grace", "erin")]
)
BOARDS_PER_PERSON = 8
LIKES_PER_PERSON, LIKED_FROM = 6, 24  # each person likes 6 of the newest 24 boards (not their own)
REMIXERS = ("bob", "erin")  # who remix the newest board


class Command(BaseCommand):
    help = "Creates the demo world: people, follows, boards with drawings, and a staff account."

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true", help="do nothing if any user exists")
        parser.add_argument("--seed", type=int, default=2026)

    def handle(self, *args, if_empty: bool, seed: int, **options):
        User = get_user_model()
        if if_empty and User.objects.exists():
            self.stdout.write("Demo world already there; keeping your data.")
            return
        rng = random.Random(seed)
        staff = account_create(username=STAFF[0], password=STAFF[1], is_staff=True)
        two_factor_seed(user=staff, secret=STAFF_OTP_SECRET)
        people = {name: account_create(username=name, password=DEMO_PASSWORD) for name in PEOPLE}

        for follower, followee in FOLLOWS:
            follow_create(follower=people[follower], followee=people[followee])
        total = len(PEOPLE) * BOARDS_PER_PERSON
        made = []
        with tqdm(total=total, desc="demo boards", unit="board", disable=None) as bar:
            for i in range(total):
                title, kind, tags, doc = drawing(rng, i)
                with transaction.atomic():
                    made.append(
                        board_create(author=people[PEOPLE[i % len(PEOPLE)]], title=title, kind=kind, tags=tags, doc=doc)
                    )
                bar.update()
        # Each person likes a few boards of others (newer ones more often), and two remix one.
        for person in people.values():
            for board in rng.sample(made[-LIKED_FROM:], LIKES_PER_PERSON):
                if board.author_id != person.pk:
                    like(user=person, board=board)
        for name in REMIXERS:
            source = made[-1]
            board_remix(author=people[name], source=source, changes={})
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo world: {len(PEOPLE)} people (password {DEMO_PASSWORD!r}), {len(FOLLOWS)} follows, "
                f"{total} boards, likes and {len(REMIXERS)} remixes; staff login {STAFF[0]} / {STAFF[1]} "
                f"with two-factor on (`make otp USER={STAFF[0]}` prints its code)."
            )
        )
