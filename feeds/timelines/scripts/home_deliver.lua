#!lua flags=allow-cross-slot-keys
-- Deliver board ids to several home timelines P, each only while its owner still follows the
-- author and has been active lately. Fan-out and back-fill both come through here: an unfollow
-- removes the edge from the following set first, so a batch already in flight can never
-- re-add a board after it; an idle owner is skipped (their P is regenerated when they return).
-- One call serves many followers whose keys lie on one Redis node, in many slots: declared
-- KEYS would have to share a slot, so the keys come in ARGV (built by feeds.keys, grouped by
-- ugcsite.redis.run_by_node) and the flag above lets the script touch several slots.
-- KEYS     none
-- ARGV[1]  author id
-- ARGV[2]  the hard cap of P (hot size + slack): past it the oldest ids are dropped
-- ARGV[3]  the size past which P waits for the archiver (hot size + one chunk)
-- ARGV[4]  B, how many board ids follow
-- ARGV[5 .. 4+B]  board ids (each its own score)
-- ARGV[5+B ..]    triples: P[f], following[f], active[f], ... (each triple in f's {u:f} slot)
-- Returns  the 1-based positions (triple numbers) of the timelines that now wait for archival.
local author = ARGV[1]
local cap = tonumber(ARGV[2])
local due = tonumber(ARGV[3])
local boards = tonumber(ARGV[4])
local members = {}
for i = 5, 4 + boards do
    members[#members + 1] = ARGV[i]
    members[#members + 1] = ARGV[i]
end
local first = 5 + boards
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
