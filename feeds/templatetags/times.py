"""``{{ when|ago }}``: "5 minutes ago" as a card shows it; ``{{ when|exact }}``: the full time for
the hover title. static/js/times.js keeps the relative times current in the page with the same
calendar (Django's timesince) and the same words, which it reads from ``{% times_config_script %}``."""

from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import avoid_wrapping, json_script
from django.utils.timesince import TIME_STRINGS, TIME_STRINGS_KEYS, timesince

register = template.Library()

# Under a minute timesince would say "0 minutes"; a time in the future (a clock ahead) is just now too.
JUST_NOW_SECONDS = 60
JUST_NOW = "just now"
AGO = "{} ago"


@register.filter
def ago(when: datetime | None, now: datetime | None = None) -> str:
    """The largest whole calendar unit since ``when`` (timesince with depth 1), as of ``now``."""
    if not when:
        return ""
    now = now or timezone.now()
    if (now - when).total_seconds() < JUST_NOW_SECONDS:
        return JUST_NOW
    return AGO.format(timesince(when, now, depth=1))


@register.filter
def exact(when: datetime | None) -> str:
    return f"{when:%b} {when.day}, {when:%Y}, {when:%H:%M} UTC" if when else ""


def _unit_forms(name: str) -> list[str]:
    """timesince's words for one unit and for many, with {n} for the number: ["{n}\xa0year",
    "{n}\xa0years"] (USE_I18N is off, so Django's plural rule is "many unless exactly 1")."""
    return [avoid_wrapping(TIME_STRINGS[name] % {"num": n}).replace(str(n), "{n}", 1) for n in (1, 2)]


def times_config() -> dict:
    """What static/js/times.js needs to write what ``ago`` writes."""
    return {
        "justNowSeconds": JUST_NOW_SECONDS,
        "justNow": JUST_NOW,
        "ago": AGO,
        "units": [_unit_forms(name) for name in TIME_STRINGS_KEYS],  # years first, as timesince counts
    }


@register.simple_tag
def times_config_script() -> str:
    """The ``times-config`` JSON every page embeds for static/js/times.js."""
    return json_script(times_config(), "times-config")
