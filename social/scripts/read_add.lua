--- ARGV: board_id at cutoff retention
-- Record one read: the board joins the reader's read set (scored by the read time; a second
-- read of it sets its time) and its id set, reads older than the retention leave both, and
-- both expire with the newest read.
-- KEYS[1]  r:{u:N}, the read set (board id -> read time); KEYS[2] rs:{u:N}, its ids (same slot)
-- board_id  the board id, at the read time (epoch seconds), cutoff the cut-off (reads
--          older than it leave), retention the retention in seconds (the keys' TTL)
-- Returns  the number of reads that left. Cost O(log n + expired).
redis.call('ZADD', KEYS[1], ARG.at, ARG.board_id)
redis.call('SADD', KEYS[2], ARG.board_id)
local old = redis.call('ZRANGE', KEYS[1], '-inf', '(' .. ARG.cutoff, 'BYSCORE')
if #old > 0 then
    redis.call('ZREM', KEYS[1], unpack(old))
    redis.call('SREM', KEYS[2], unpack(old))
end
redis.call('EXPIRE', KEYS[1], ARG.retention)
redis.call('EXPIRE', KEYS[2], ARG.retention)
return #old
