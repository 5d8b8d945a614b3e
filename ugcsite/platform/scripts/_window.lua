-- A library (a script names it with `--- USES: window`): one attempt against one sliding-window
-- limit (ugcsite.platform.ratelimits). The limit's hash holds its attempts per slice of time
-- (`length` seconds long, numbered from the epoch). An attempt counts when the slices from
-- `slices` ago to the current one (at least a whole window, at most a slice more) hold fewer
-- than `allowed`; slices older than that are deleted.
-- Returns nil when the attempt counted; else the seconds until the window would count one (a
-- float). Cost O(slices).
local function window_attempt(key, allowed, now, length, slices)
    local current = math.floor(now / length)
    local oldest = current - slices
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
                return (slice[1] + slices + 1) * length - now
            end
        end
    end
    redis.call('HINCRBY', key, current, 1)
    redis.call('EXPIRE', key, (slices + 1) * length + 1)
    return nil
end
