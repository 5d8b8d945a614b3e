"""Discovery (Viki's set-index query engine): ``indexes`` (what a board is in), ``queries``
(filter, sort, page and count in one Lua call), ``counters`` (views, flushed to PostgreSQL)
and ``trending`` (the 24-hour roll-up), with their beat tasks in ``tasks``."""
