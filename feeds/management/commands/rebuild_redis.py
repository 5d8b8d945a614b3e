from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from tqdm import tqdm

from feeds import rebuild
from feeds.models import Board
from ugcsite.redis import key_count


class Command(BaseCommand):
    help = ("Rebuilds every Redis structure from PostgreSQL: follow graph, timelines whole, archive marks, "
            "counts, activity, reads, discovery indexes with popular and trending.")

    def add_arguments(self, parser):
        parser.add_argument("--if-empty", action="store_true",
                            help="only when the data Redis holds no key at all (a new, flushed or restarted one)")

    def handle(self, *args, if_empty: bool = False, **options):
        if if_empty and key_count():
            return
        user_ids = list(get_user_model().objects.order_by("id").values_list("id", flat=True))
        if if_empty and not user_ids:
            return
        rebuild.recount_profiles()
        for label, step in rebuild.USER_STEPS:
            with tqdm(total=len(user_ids), desc=label, unit="user", disable=None) as bar:
                step(user_ids, bar.update)
        boards = Board.objects.filter(state=Board.State.PUBLISHED).count()
        with tqdm(total=boards, desc="discovery indexes", unit="board", disable=None) as bar:
            rebuild.rebuild_discovery(bar.update)
        self.stdout.write(self.style.SUCCESS(
            f"Rebuilt Redis for {len(user_ids)} users; board cache entries refill on first read, "
            "and a timeline past its window waits for `archive_now` or the next scheduled run."
        ))
