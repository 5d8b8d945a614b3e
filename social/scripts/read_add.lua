-- Record one read: the board joins the reader's read set (scored by the read time; a second
-- read of it sets its time) and its id set, reads older than the retention leave both, and
-- both expire with the newest read.
-- KEYS[1]  r:{u:N}, the read set (board id -> read time); KEYS[2] rs:{u:N}, its ids (same slot)
-- ARGV[1]  the board id, ARGV[2] the read time (epoch seconds), ARGV[3] the cut-off (reads
--          older than it leave), ARGV[4] the retention in seconds (the keys' TTL)
-- Returns  the number of reads that left. Cost O(log n + expired).
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
local old = redis.call('ZRANGE', KEYS[1], '-inf', '(' .. ARGV[3], 'BYSCORE')
if #old > 0 then
    redis.call('ZREM', KEYS[1], unpack(old))
    redis.call('SREM', KEYS[2], unpack(old))
end
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return #old
