#!lua flags=allow-cross-slot-keys
--- ARGV: author cap due count board_ids...
-- Deliver board ids to several home timelines P, each only while its owner still follows the
-- author and has been active lately. Fan-out and back-fill both come through here: an unfollow
-- removes the edge from the following set first, so a batch already in flight can never
-- re-add a board after it; an idle owner is skipped (their P is regenerated when they return).
-- One call serves many followers whose keys lie on one Redis node, in many slots: declared
-- KEYS would have to share a slot, so the keys come in ARGV (built by feeds.keys, grouped by
-- ugcsite.platform.redis.run_by_node) and the flag above lets the script touch several slots.
-- KEYS     none
-- author  author id
-- cap  the hard cap of P (hot size + slack): past it the oldest ids are dropped
-- due  the size past which P waits for the archiver (hot size + one chunk)
-- count  B, how many board ids follow
-- board_ids...  B board ids (each its own score)
-- then            triples: P[f], following[f], active[f], ... (each triple in f's {u:f} slot)
-- Returns  the 1-based positions (triple numbers) of the timelines that now wait for archival.
local author = ARG.author
local cap = tonumber(ARG.cap)
local due = tonumber(ARG.due)
local boards = tonumber(ARG.count)
local members = {}
for i = ARG.board_ids_at, ARG.board_ids_at + boards - 1 do
    members[#members + 1] = ARGV[i]
    members[#members + 1] = ARGV[i]
end
local first = ARG.board_ids_at + boards
local waiting = {}
for k = first, #ARGV, 3 do
    if redis.call('EXISTS', ARGV[k + 2]) == 1 and redis.call('ZSCORE', ARGV[k + 1], author) then
        redis.call('ZADD', ARGV[k], unpack(members))
        local size = redis.call('ZCARD', ARGV[k])
        if size > cap then
            redis.call('ZREMRANGEBYRANK', ARGV[k], 0, size - cap - 1)
            size = cap
        end
        if size >= due then
            waiting[#waiting + 1] = (k - first) / 3 + 1
        end
    end
end
return waiting
