"""The Lua scripts every part of feeds may use: small conditional writes (``hset_max``,
``hincrby_if_exists``), one per ``.lua`` file here (``ugcsite.platform.redis.Scripts``). Each part's own
scripts sit beside it: ``feeds/timelines/scripts``, ``feeds/live/scripts``, ``feeds/discovery/scripts``."""

from pathlib import Path

from ugcsite.platform.redis import Scripts

scripts = Scripts(Path(__file__).parent)
