"""Signals social sends for the apps above it, which social may not import (feeds listens)."""

from django.dispatch import Signal

# A person's public profile changed (display name, bio, picture): sent after the change is
# written, with ``user``. feeds.federation sends their actor's Update to other servers.
profile_changed = Signal()
