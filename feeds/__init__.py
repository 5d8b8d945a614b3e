"""Boards and everything read from them: the feed app (ugcsite -> feeds -> social).

- ``models``, ``rules``: the tables, and the facts of a board (kinds, limits, patterns) spelled once.
- ``keys``: every Redis key of boards, timelines and discovery, each with its owner's hash tag.
- ``timelines/``: the timeline engine: M, P, fan-out, hybrid, archive, pages (its own map).
- ``discovery/``: the set-index query engine: kinds, tags, popular, trending, counters.
- ``live/``: shared boards live: the WebSocket consumer, the op log, compaction, who is online,
  and ``broadcast`` (Channels sends to open sockets).
- ``services/``: the writes, one function per thing a person does (publish, follow, ...).
- ``selectors``: the reads that views and the API share; ``search``: full-text search of boards.
- ``notifications``: the aggregated notification rows; ``tasks``: the Celery tasks.
- ``erasure``: a deleted account's boards withdrawn, then every row and key that names it;
  ``export``: a person's data as a zip (take my data).
- ``validation``, ``svg``: a drawing's document checked, and drawn as SVG.
- ``images``: pictures for the canvas: an upload checked and re-encoded, the copy in Django's
  storage, which pictures a board may show (``services.images``: an upload within its quota, hiding).
- ``federation/``: ActivityPub: actors and Notes, the inboxes, signed deliveries (its own map).
- ``api/``, ``views/``, ``urls``, ``templatetags/``: the JSON API and the pages.
- ``demo``, ``management/``: the demo world and the manage.py commands.
"""
