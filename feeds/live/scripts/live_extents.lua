--- ARGV: seq items...
-- COMPAT(remove after 2026-12-31): give the right and bottom end of every element to a live state
-- loaded by the release before 2026-11-26, which kept none (live_apply answers 'extents'), as
-- they were at seq: only if no op came since (else the caller reads the doc again).
-- KEYS[1]  meta hash (lm:), KEYS[2] element ids by right end (lx:), KEYS[3] element ids by bottom end (ly:)
-- seq  the seq of the doc the ends were read from
-- items...  three arguments an element: id, right end, bottom end
-- Returns  1 when written, 0 when the board moved on (or is not live).
local meta, rights, bottoms = KEYS[1], KEYS[2], KEYS[3]
if redis.call('HGET', meta, 'seq') ~= ARG.seq then return 0 end
redis.call('DEL', rights, bottoms)
for i = ARG.items_at, #ARGV, 3 do
    redis.call('ZADD', rights, ARGV[i + 1], ARGV[i])
    redis.call('ZADD', bottoms, ARGV[i + 2], ARGV[i])
end
local ttl = redis.call('TTL', meta)
if ttl > 0 then
    redis.call('EXPIRE', rights, ttl)
    redis.call('EXPIRE', bottoms, ttl)
end
return 1
