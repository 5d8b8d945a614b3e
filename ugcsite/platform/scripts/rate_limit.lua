--- ARGV: now slice slices allowed...
-- Count one attempt against each limit of a request, in KEYS' order, over a sliding window
-- (ugcsite.platform.ratelimits): a limit's hash holds its attempts per slice of time (`slice` seconds
-- long, numbered from the epoch). An attempt counts when the slices from `slices` ago to the
-- current one (at least a whole window, at most a slice more) hold fewer than the limit
-- allows; slices older than that are deleted. The first limit that refuses stops the count:
-- the limits before it counted the attempt, the ones after it did not.
-- KEYS     one hash a limit (rl:<kind>:<per_minute>:<who>): slice number -> attempts
-- now      the time in seconds (a float); slice a slice's length in seconds; slices how many
--          make a window
-- allowed  each limit's attempts a window, in KEYS' order
-- Returns  0 when every limit counted the attempt; else {the refusing limit's place in KEYS
--          (from 1), the seconds until it would count one (a string: a float)}
-- Cost     O(slices) a limit.
local now, length, slices = tonumber(ARG.now), tonumber(ARG.slice), tonumber(ARG.slices)
local current = math.floor(now / length)
local oldest = current - slices
for i, key in ipairs(KEYS) do
    local allowed = tonumber(ARGV[ARG.allowed_at + i - 1])
    local counts = redis.call('HGETALL', key)
    local kept, total = {}, 0
    for f = 1, #counts, 2 do
        local at = tonumber(counts[f])
        if at < oldest then
            redis.call('HDEL', key, counts[f])
        else
            local n = tonumber(counts[f + 1])
            total = total + n
            kept[#kept + 1] = {at, n}
        end
    end
    if total >= allowed then
        -- the wait: until enough of the oldest slices have left the window to leave room for one
        table.sort(kept, function(a, b) return a[1] < b[1] end)
        local left = total
        for _, slice in ipairs(kept) do
            left = left - slice[2]
            if left < allowed then
                return {i, tostring((slice[1] + slices + 1) * length - now)}
            end
        end
    end
    redis.call('HINCRBY', key, current, 1)
    redis.call('EXPIRE', key, (slices + 1) * length + 1)
end
return 0
