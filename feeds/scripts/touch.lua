-- Record that a user is active. A user returning after being idle (the mark had expired) gets
-- their home timeline dropped, since fan-out skipped them meanwhile: it is regenerated on read.
-- KEYS[1]  active[u] (a string with a TTL), KEYS[2] P[u] (same {u:id} slot)
-- ARGV[1]  the idle time in seconds (the TTL of both)
-- Returns  1 if the user was idle (or new), 0 if they were active.
local was = redis.call('SET', KEYS[1], '1', 'EX', ARGV[1], 'GET')
if not was then
    redis.call('DEL', KEYS[2])
    return 1
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
return 0
