from django.core.management.base import BaseCommand
from tqdm import tqdm

from feeds.rules import Timeline
from feeds.timelines import archive


class Command(BaseCommand):
    help = "Runs the timeline archival at once: every timeline past its hot window moves its old chunks to PostgreSQL."

    def add_arguments(self, parser):
        parser.add_argument(
            "--user",
            type=int,
            action="append",
            default=[],
            help="also archive this user's timelines even if not flagged (repeatable)",
        )

    def handle(self, *args, user: list[int], **options):
        for user_id in user:
            for kind in Timeline:
                archive.flag_waiting(kind, [user_id])
        with tqdm(total=archive.waiting_count(), desc="timelines", unit="timeline", disable=None) as bar:
            run = archive.archive_waiting(trigger="command", progress=bar.update)
        self.stdout.write(
            self.style.SUCCESS(f"Archived {run.ids:,} ids in {run.chunks:,} chunks from {run.timelines:,} timelines.")
        )
        if run.errors:
            self.stderr.write(self.style.ERROR(f"Some timelines failed and wait for the next run:\n{run.errors}"))
