#!lua flags=allow-cross-slot-keys
--- ARGV: revision_field owners...
-- Rewrite several timelines (P or M) whole, each at once (a reader sees the old list or the new,
-- never a half-written one), and bump each one's revision (the field revision_field of its
-- owner's tm), so a feed snapshot made before no longer counts. rebuild_redis, a batch of people
-- at a time. One call serves many owners whose keys lie on one Redis node, in many slots: the
-- keys come in ARGV (built by feeds.keys, grouped by ugcsite.platform.redis.run_by_node), as in
-- timeline_remove.lua.
-- KEYS     none
-- revision_field  the field of the revision in tm (m_revision or p_revision)
-- owners...  for each owner: the timeline, the owner's tm, N, then N board ids (one {u:N} slot)
-- Returns  how many ids were written, over every timeline.
local written = 0
local i = ARG.owners_at
while i <= #ARGV do
    local timeline, meta, count = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
    local first, last = i + 3, i + 2 + count
    redis.call('DEL', timeline)
    for start = first, last, 1000 do  -- unpack's stack is bounded: at most 1,000 ids a ZADD
        local pairs = {}
        for j = start, math.min(start + 999, last) do
            pairs[#pairs + 1] = ARGV[j]
            pairs[#pairs + 1] = ARGV[j]
        end
        redis.call('ZADD', timeline, unpack(pairs))
    end
    redis.call('HINCRBY', meta, ARG.revision_field, 1)
    written = written + count
    i = last + 1
end
return written
