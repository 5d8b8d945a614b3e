-- A library (a script names it with `--- USES: window gate`): the gate of a signed-in read
-- (social.limits.ReadGate), before the read itself. KEYS[first] is the reader's bearer token's
-- cache entry (social.token_cache: the tombstone "-" or "<user id>:<expiry>"); each key after it
-- is the hash of a read limit (ugcsite.platform.ratelimits, _window.lua), whose reads a window
-- are ARGV[allowed_at], ARGV[allowed_at + 1], ... in order.
-- Returns nil when the token holds and every limit counted the read; else 'token-unknown' (no
-- entry: the caller checks the token the longer way, which fills it), 'token-refused' (revoked,
-- expired, or another person's than `owner`) or {the refusing limit's place from 1, the seconds
-- until it counts one (a string)}: the limits before it counted the read, the ones after it not.
-- Cost O(1) plus O(61) a limit.
local function read_gate(first, owner, now, length, slices, allowed_at)
    local entry = redis.call('GET', KEYS[first])
    if not entry then
        return 'token-unknown'
    end
    local id, expires = string.match(entry, '^(%d+):(.+)$')
    if id ~= owner or not (tonumber(expires) > now) then
        return 'token-refused'
    end
    for i = first + 1, #KEYS do
        local wait = window_attempt(KEYS[i], tonumber(ARGV[allowed_at + i - first - 1]), now, length, slices)
        if wait then
            return {i - first, tostring(wait)}
        end
    end
    return nil
end
