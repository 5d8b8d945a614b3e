from django.core.management.base import BaseCommand, CommandError

from social import two_factor
from social.models import TwoFactor


class Command(BaseCommand):
    help = "Prints the current one-time code of a person's two-factor key (`make otp USER=admin`: the demo admin's)."

    def add_arguments(self, parser):
        parser.add_argument("username")

    def handle(self, *args, username: str, **options):
        row = TwoFactor.objects.filter(user__username__iexact=username).first()
        if row is None:
            raise CommandError(f"{username!r} has no two-factor key (is the name right? `make otp USER=admin`).")
        self.stdout.write(two_factor.current_code(row.secret))
