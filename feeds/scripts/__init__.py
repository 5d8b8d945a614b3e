"""The Lua scripts of feeds, one per ``.lua`` file here, each registered once per process.

``scripts.<name>(keys=[...], args=[...], client=pipe)`` runs ``<name>.lua`` (EVALSHA, loading it
on first use); pass ``client=`` to run it inside a pipeline.
"""

from pathlib import Path

from ugcsite.redis import get_redis

_HERE = Path(__file__).parent


class _Scripts:
    def __getattr__(self, name: str):
        path = _HERE / f"{name}.lua"
        if not path.exists():
            raise AttributeError(name)
        script = get_redis().register_script(path.read_text())
        setattr(self, name, script)
        return script


scripts = _Scripts()
