"""The Lua scripts of social, one per ``.lua`` file here (``ugcsite.platform.redis.Scripts``)."""

from pathlib import Path

from ugcsite.platform.ratelimits import SCRIPTS as LIMIT_SCRIPTS
from ugcsite.platform.redis import Scripts

SCRIPTS = Path(__file__).parent  # and its libraries: _gate.lua (feeds' timeline_page uses it too)
scripts = Scripts(SCRIPTS, libraries=[LIMIT_SCRIPTS])  # read_gate.lua counts read limits (window)
