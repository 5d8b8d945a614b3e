"""``{{ when|ago }}``: "5 minutes ago" as a card shows it (static/js/times.js keeps it current
in the page, with the same words); ``{{ when|exact }}``: the full time for the hover title."""

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def ago(when: datetime | None) -> str:
    if not when:
        return ""
    if (timezone.now() - when).total_seconds() < 60:
        return "just now"
    return f"{timesince(when, depth=1)} ago"


@register.filter
def exact(when: datetime | None) -> str:
    return f"{when:%b} {when.day}, {when:%Y}, {when:%H:%M} UTC" if when else ""
