-- Deliver board ids to several home timelines P, each only while its owner still follows the
-- author. Fan-out and back-fill both come through here: an unfollow removes the edge from the
-- following set first, so a batch already in flight can never re-add a board after it.
-- KEYS     pairs: P[f1], following[f1], P[f2], following[f2], ...  (each pair in f's {u:f} slot;
--          on a Redis Cluster every pair of one call must share a slot: feeds.timelines groups them)
-- ARGV[1]  author id
-- ARGV[2]  the hot size of P; ARGV[3] slack: a P is trimmed to ARGV[2] once past ARGV[2] + ARGV[3]
-- ARGV[4..] board ids (each its own score)
-- Returns  the number of timelines that received the ids (edges still in place).
local author = ARGV[1]
local hot = tonumber(ARGV[2])
local cap = hot + tonumber(ARGV[3])
local pairs = {}
for i = 4, #ARGV do
    pairs[#pairs + 1] = ARGV[i]
    pairs[#pairs + 1] = ARGV[i]
end
local delivered = 0
for k = 1, #KEYS, 2 do
    if redis.call('ZSCORE', KEYS[k + 1], author) then
        redis.call('ZADD', KEYS[k], unpack(pairs))
        if redis.call('ZCARD', KEYS[k]) > cap then
            redis.call('ZREMRANGEBYRANK', KEYS[k], 0, -(hot + 1))
        end
        delivered = delivered + 1
    end
end
return delivered
