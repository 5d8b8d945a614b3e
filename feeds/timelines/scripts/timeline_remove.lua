#!lua flags=allow-cross-slot-keys
--- ARGV: revision_field count board_ids...
-- Take board ids out of several timelines (P or M), and bump the revision of each timeline that
-- lost one (the field revision_field of its owner's tm), so a feed snapshot made before no longer
-- counts (feeds.timelines.snapshot); a timeline that held none of them keeps its revision, so an
-- id that is only archived (a chunk keeps it; the head never had it) invalidates nothing.
-- One call serves many owners whose keys lie on one Redis node, in many slots: the keys come in
-- ARGV (built by feeds.keys, grouped by ugcsite.platform.redis.run_by_node), as in home_deliver.lua.
-- KEYS     none
-- revision_field  the field of the revision in tm (m_revision or p_revision)
-- count  B, how many board ids follow
-- board_ids...  B board ids
-- then            pairs: the timeline, its owner's tm, ... (each pair in its owner's {u:N} slot)
-- Returns  how many ids were taken out, over every timeline.
local boards = tonumber(ARG.count)
local ids = {}
for i = ARG.board_ids_at, ARG.board_ids_at + boards - 1 do
    ids[#ids + 1] = ARGV[i]
end
local removed = 0
for k = ARG.board_ids_at + boards, #ARGV, 2 do
    local here = 0
    for start = 1, #ids, 1000 do  -- unpack's stack is bounded: at most 1,000 ids a ZREM
        here = here + redis.call('ZREM', ARGV[k], unpack(ids, start, math.min(start + 999, #ids)))
    end
    if here > 0 then
        redis.call('HINCRBY', ARGV[k + 1], ARG.revision_field, 1)
        removed = removed + here
    end
end
return removed
