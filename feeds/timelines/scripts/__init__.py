"""The Lua scripts of feeds.timelines, one per ``.lua`` file here (``ugcsite.redis.Scripts``)."""

from pathlib import Path

from ugcsite.redis import Scripts

scripts = Scripts(Path(__file__).parent)
