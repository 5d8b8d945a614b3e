--- ARGV: g_before g_after revision_field board_ids...
-- The G hashes of a page's ids in one call, with a home page's visibility: for the pages that
-- timeline_page.lua hands back (merged with big followees' M, or reaching the archive), on a
-- plain Redis only: G hashes live in other slots, read by the key spelling g_before and g_after
-- give (feeds.keys.parts).
-- KEYS[1]  the timeline (P[u] or M[u]); KEYS[2..4] home only: following[u], hx[u], tm[u] (same slot)
-- g_before, g_after  the G key's text before and after the board id
-- revision_field  home only: the field of P's revision in tm[u], bumped when an id leaves P
-- board_ids...  the page's board ids
-- Returns  one entry per id: the flat HGETALL of G, {} for a miss (the caller loads it from
--          PostgreSQL), or 0 for a board whose author the reader no longer follows (taken out
--          of the timeline here; a no-op for an archived id, which leaves the revision alone),
--          or -1 for one whose author the reader does not see (blocked or muted: left in place).
--          Cost O(ids) hash reads and probes.
local home = #KEYS >= 2
local followed = {}
local reply = {}
local removed = 0
for i = ARG.board_ids_at, #ARGV do
    local id = ARGV[i]
    local hash = redis.call('HGETALL', ARG.g_before .. id .. ARG.g_after)
    local shows = 'keep'
    if home and #hash > 0 then
        shows = home_shows(hash, KEYS[2], KEYS[3], followed)
    end
    if shows == 'keep' then
        reply[#reply + 1] = hash
    elseif shows == 'gone' then
        removed = removed + redis.call('ZREM', KEYS[1], id)
        reply[#reply + 1] = 0
    else
        reply[#reply + 1] = -1
    end
end
if removed > 0 then
    redis.call('HINCRBY', KEYS[4], ARG.revision_field, 1)
end
return reply
