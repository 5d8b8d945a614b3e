"""Writes: the only place that combines PostgreSQL, Redis and task enqueues (on commit).

``boards`` (create, edit, delete, views), ``moderation`` (hide, suspend), ``follows`` (a
follow edge of social plus the feed's back-fill or clean-up) and ``activity`` (who is active,
and a returning user's feed made whole before it is read)."""
