"""ActivityPub federation (issue 39; docs/federation.md): people and boards seen from Mastodon and
the rest of the fediverse, and their likes, boosts, replies and follows coming back.

- ``signatures``: draft-cavage and RFC 9421 HTTP signatures, digests, RSA keys (pure functions).
- ``http``: the guarded client every outgoing request takes (no private addresses, bounded).
- ``documents``: the ids and the JSON we say (Person, Note, activities, WebFinger, NodeInfo).
- ``actors``: our actors' keys (ActorKey) and documents; ``remote``: remote actors fetched and cached.
- ``inbox``: incoming activities verified and handled; ``delivery``: the outbox, the walk into
  one delivery per shared inbox, Mastodon's retries, the breaker; ``tasks``: their Celery tasks.
- ``services``: what the board services, moderation and accounts tell federation, domain and
  person blocks; ``selectors``: reads for pages; ``signals``: social's profile changes received.
- ``views``, ``urls``, ``api``: the endpoints (content negotiation on the pages' own URLs).
"""
