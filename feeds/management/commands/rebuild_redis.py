import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from feeds.models import Board
from feeds.timelines import rebuild
from ugcsite.platform.redis import get_redis, key_count

ATTEMPTS = 3


class Command(BaseCommand):
    help = (
        "Rebuilds every Redis structure from PostgreSQL: follow graph, timelines whole, archive marks, "
        "counts, activity, reads, discovery indexes with popular and trending."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-empty",
            action="store_true",
            help="only when the data Redis holds no key at all (a new, flushed or restarted one)",
        )
        parser.add_argument(
            "--flush",
            action="store_true",
            help="first empty the data Redis (every node), Celery's queue and Django's cache: after PostgreSQL "
            "was restored to an earlier moment (make restore), nothing they hold may outlive it",
        )

    def handle(self, *args, if_empty: bool = False, flush: bool = False, **options):
        if flush:
            # Pending reads and views would otherwise be flushed into the restored tables, and queued
            # tasks would fan out boards that no longer exist.
            get_redis().flushdb()
            redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
            cache.clear()
            self.stdout.write("Emptied the data Redis, Celery's queue and Django's cache.")
        if if_empty and key_count():
            return
        user_ids = list(get_user_model().objects.order_by("id").values_list("id", flat=True))
        if if_empty and not user_ids:
            return
        # While it runs, empty timelines answer 503 (feeds.timelines.rebuild.refuse_while_rebuilding);
        # emptied again meanwhile, it starts over.
        for attempt in range(1, ATTEMPTS + 1):
            mark = rebuild.RebuildMark()
            mark.start()
            try:
                self._rebuild(user_ids, mark)
                mark.finish()
                break
            except rebuild.RedisEmptied:
                if attempt == ATTEMPTS:
                    raise CommandError(
                        f"The data Redis was emptied during each of {ATTEMPTS} rebuilds: find what "
                        "empties it (a FLUSHALL, a restart without persistence), then run rebuild_redis again."
                    ) from None
                self.stderr.write("The data Redis was emptied while rebuilding; starting again from the beginning.")
        self.stdout.write(
            self.style.SUCCESS(
                f"Rebuilt Redis for {len(user_ids)} users; board cache entries refill on first read, "
                "and a timeline past its window waits for `archive_now` or the next scheduled run."
            )
        )

    def _rebuild(self, user_ids: list[int], mark: "rebuild.RebuildMark") -> None:
        rebuild.recount_profiles()
        for label, step in rebuild.USER_STEPS:
            with tqdm(total=len(user_ids), desc=label, unit="user", disable=None) as bar:
                step(user_ids, lambda n=1, bar=bar: (bar.update(n), mark.check()))
        boards = Board.objects.filter(state=Board.State.PUBLISHED).count()
        with tqdm(total=boards, desc="discovery indexes", unit="board", disable=None) as bar:
            rebuild.rebuild_discovery(lambda n=1, bar=bar: (bar.update(n), mark.check()))
