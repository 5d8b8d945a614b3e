"""The Lua scripts of feeds.timelines, one per ``.lua`` file here (``ugcsite.platform.redis.Scripts``)."""

from pathlib import Path

from social.scripts import SCRIPTS as SOCIAL_SCRIPTS
from ugcsite.platform.ratelimits import SCRIPTS as LIMIT_SCRIPTS
from ugcsite.platform.redis import Scripts

# timeline_page.lua's gate checks a reader's token and counts their read limits (window, gate)
scripts = Scripts(Path(__file__).parent, libraries=[LIMIT_SCRIPTS, SOCIAL_SCRIPTS])
