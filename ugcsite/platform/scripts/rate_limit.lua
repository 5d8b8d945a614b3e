--- ARGV: now slice slices allowed...
--- USES: window
-- Count one attempt against each limit of a request, in KEYS' order, over a sliding window
-- (ugcsite.platform.ratelimits; the window itself is _window.lua's window_attempt). The first
-- limit that refuses stops the count: the limits before it counted the attempt, the ones after
-- it did not.
-- KEYS     one hash a limit (rl:<kind>:<per_minute>:<who>): slice number -> attempts
-- now      the time in seconds (a float); slice a slice's length in seconds; slices how many
--          make a window
-- allowed  each limit's attempts a window, in KEYS' order
-- Returns  0 when every limit counted the attempt; else {the refusing limit's place in KEYS
--          (from 1), the seconds until it would count one (a string: a float)}
-- Cost     O(slices) a limit.
local now, length, slices = tonumber(ARG.now), tonumber(ARG.slice), tonumber(ARG.slices)
for i, key in ipairs(KEYS) do
    local wait = window_attempt(key, tonumber(ARGV[ARG.allowed_at + i - 1]), now, length, slices)
    if wait then
        return {i, tostring(wait)}
    end
end
return 0
