--- ARGV: g_before g_after board_ids...
-- The G hashes of a page's ids in one call, with a home page's visibility: for the pages that
-- timeline_page.lua hands back (merged with big followees' M, or reaching the archive), on a
-- plain Redis only: G hashes live in other slots, read by the key spelling g_before and g_after
-- give (feeds.keys.parts).
-- KEYS[1]  the timeline (P[u] or M[u]); KEYS[2] home only: following[u] (same slot)
-- g_before, g_after  the G key's text before and after the board id
-- board_ids...  the page's board ids
-- Returns  one entry per id: the flat HGETALL of G, {} for a miss (the caller loads it from
--          PostgreSQL), or 0 for a board whose author the reader no longer follows (taken out
--          of the timeline here; a no-op for an archived id). Cost O(ids) hash reads and probes.
local home = #KEYS >= 2
local followed = {}
local reply = {}
for i = ARG.board_ids_at, #ARGV do
    local id = ARGV[i]
    local hash = redis.call('HGETALL', ARG.g_before .. id .. ARG.g_after)
    local keep = true
    if home and #hash > 0 then
        keep = still_followed(hash, KEYS[2], followed)
    end
    if keep then
        reply[#reply + 1] = hash
    else
        redis.call('ZREM', KEYS[1], id)
        reply[#reply + 1] = 0
    end
end
return reply
