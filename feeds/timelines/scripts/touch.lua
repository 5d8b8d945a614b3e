--- ARGV: ttl
-- Record that a user is active. A user coming back after being idle (the mark had expired)
-- is flagged for regeneration: fan-out skipped them meanwhile, so before their feed is read
-- it is refilled from their followees' timelines (feeds.services.home_feed_ready).
-- KEYS[1]  active[u] (a string with a TTL), KEYS[2] the timeline meta hash of u (same slot)
-- ttl  the idle time in seconds (the mark's TTL)
-- Returns  1 if the user was idle (or new), 0 if they were active.
local was = redis.call('SET', KEYS[1], '1', 'EX', ARG.ttl, 'GET')
if not was then
    redis.call('HSET', KEYS[2], 'regenerate', '1')
    return 1
end
return 0
