-- Deliver board ids to several home timelines P, each only while its owner still follows the
-- author and has been active lately. Fan-out and back-fill both come through here: an unfollow
-- removes the edge from the following set first, so a batch already in flight can never
-- re-add a board after it; an idle owner is skipped (their P is regenerated when they return).
-- KEYS     triples: P[f], following[f], active[f], ...  (each triple in f's {u:f} slot; on a
--          Redis Cluster every triple of one call shares a slot: feeds.timelines groups them)
-- ARGV[1]  author id
-- ARGV[2]  the hard cap of P (hot size + slack): past it the oldest ids are dropped
-- ARGV[3]  the size past which P waits for the archiver (hot size + one chunk)
-- ARGV[4..] board ids (each its own score)
-- Returns  the 1-based positions (triple numbers) of the timelines that now wait for archival.
local author = ARGV[1]
local cap = tonumber(ARGV[2])
local due = tonumber(ARGV[3])
local members = {}
for i = 4, #ARGV do
    members[#members + 1] = ARGV[i]
    members[#members + 1] = ARGV[i]
end
local waiting = {}
for k = 1, #KEYS, 3 do
    if redis.call('EXISTS', KEYS[k + 2]) == 1 and redis.call('ZSCORE', KEYS[k + 1], author) then
        redis.call('ZADD', KEYS[k], unpack(members))
        local size = redis.call('ZCARD', KEYS[k])
        if size > cap then
            redis.call('ZREMRANGEBYRANK', KEYS[k], 0, size - cap - 1)
            size = cap
        end
        if size >= due then
            waiting[#waiting + 1] = (k + 2) / 3
        end
    end
end
return waiting
