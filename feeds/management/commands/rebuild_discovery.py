from django.core.management.base import BaseCommand
from tqdm import tqdm

from feeds.models import Board
from feeds.timelines import rebuild


class Command(BaseCommand):
    help = (
        "Rebuilds discovery alone from PostgreSQL: every index, sort order, facet count and the trending "
        "window, in the shards of feeds.rules.DISCOVERY_SHARDS; first it deletes every discovery key, "
        "of every shard and of the single {d} layout before the shards (docs/operations.md, deploying)."
    )

    def handle(self, *args, **options):
        boards = Board.objects.filter(state=Board.State.PUBLISHED).count()
        with tqdm(total=boards, desc="discovery indexes", unit="board", disable=None) as bar:
            indexed = rebuild.rebuild_discovery(bar.update)
        self.stdout.write(self.style.SUCCESS(f"Indexed {indexed:,} boards for discovery."))
