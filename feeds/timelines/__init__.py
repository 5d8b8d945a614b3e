"""The timeline engine: who sees which board, newest first, at the cost of the log of one
user's data. Storage only: Redis and PostgreSQL in and out; Celery calls it through feeds.tasks,
services and selectors through their own modules. The letters are the README's glossary
(G board cache, M a user's boards, P their home feed, F following, A archived max).

- ``ids``: board ids, time-ordered below 2^53, made without a global counter (snowflake).
- ``store``: M and P as sorted sets, the delivery into P (home_deliver.lua), the active mark.
- ``merge``: merging id streams newest first, the archive's streams opened only when reached.
- ``pages``: a page by offset or cursor across head and archive, one script call when warm.
- ``archive``: the list-of-lists history, chunks of old ids in PostgreSQL, and A.
- ``fanout``: walks of an author's followers (new board, retraction, follow back-fill, unfollow).
- ``hybrid``: big authors, whose boards are merged at read time instead of pushed.
- ``regeneration``: idle readers' P dropped by the sweeper and refilled on their return.
- ``activity``: who is active (the mark and the last-seen index), flushed to PostgreSQL.
- ``outbox``: the rows that make a fan-out or retraction survive a dead worker.
- ``visibility``, ``boardcache``: a board entering or leaving G, M and the discovery indexes.
- ``rebuild``: every Redis structure again from PostgreSQL (``manage.py rebuild_redis``).
- ``scripts/``: the Lua scripts of the engine (``_common.lua`` is prepended to each).
"""
