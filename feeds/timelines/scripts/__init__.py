"""The Lua scripts of feeds.timelines, one per ``.lua`` file here (``ugcsite.platform.redis.Scripts``)."""

from pathlib import Path

from ugcsite.platform.ratelimits import SCRIPTS as LIMIT_SCRIPTS
from ugcsite.platform.redis import Scripts

scripts = Scripts(Path(__file__).parent, libraries=[LIMIT_SCRIPTS])  # timeline_page counts read limits
