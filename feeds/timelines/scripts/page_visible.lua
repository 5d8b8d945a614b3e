-- The G hashes of a page's ids in one call, with a home page's visibility: for the pages that
-- timeline_page.lua hands back (merged with big followees' M, or reaching the archive), on a
-- plain Redis only: G hashes live in other slots, read by the key spelling ARGV[1] and ARGV[2]
-- give (feeds.keys.parts).
-- KEYS[1]  the timeline (P[u] or M[u]); KEYS[2] home only: following[u] (same slot)
-- ARGV[1], ARGV[2]  the G key's text before and after the board id
-- ARGV[3..] the page's board ids
-- Returns  one entry per id: the flat HGETALL of G, {} for a miss (the caller loads it from
--          PostgreSQL), or 0 for a board whose author the reader no longer follows (taken out
--          of the timeline here; a no-op for an archived id). Cost O(ids) hash reads and probes.
local home = #KEYS >= 2
local followed = {}
local reply = {}
for i = 3, #ARGV do
    local id = ARGV[i]
    local hash = redis.call('HGETALL', ARGV[1] .. id .. ARGV[2])
    local keep = true
    if home and #hash > 0 then
        local author
        for f = 1, #hash, 2 do
            if hash[f] == 'author_id' then
                author = hash[f + 1]
                break
            end
        end
        if author then
            if followed[author] == nil then
                followed[author] = redis.call('ZSCORE', KEYS[2], author) ~= false
            end
            keep = followed[author]
        end
    end
    if keep then
        reply[#reply + 1] = hash
    else
        redis.call('ZREM', KEYS[1], id)
        reply[#reply + 1] = 0
    end
end
return reply
