-- Deliver board ids to one home timeline P, but only while its owner still follows the author.
-- Fan-out and back-fill both come through here: an unfollow removes the edge from the
-- following set first, so a batch already in flight can never re-add a board after it.
-- KEYS[1]  P[follower]           sorted set of board ids, score = id
-- KEYS[2]  following[follower]   sorted set of followee ids (same {u:follower} slot)
-- ARGV[1]  author id
-- ARGV[2]  the hot size of P; ARGV[3] slack: P is trimmed to ARGV[2] once past ARGV[2] + ARGV[3]
-- ARGV[4..] board ids
-- Returns  the number of ids newly added (0 when the edge is gone).
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
    return 0
end
local added = 0
for i = 4, #ARGV do
    added = added + redis.call('ZADD', KEYS[1], ARGV[i], ARGV[i])
end
local hot = tonumber(ARGV[2])
if redis.call('ZCARD', KEYS[1]) > hot + tonumber(ARGV[3]) then
    redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(hot + 1))
end
return added
