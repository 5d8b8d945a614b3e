--- ARGV: field increment
-- Add to a field of a hash only if the hash exists (a cache entry is never half-created).
-- KEYS[1]  the hash (a G board cache entry)
-- field  the field, increment the increment
-- Returns  the new value, or false when the hash does not exist.
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.call('HINCRBY', KEYS[1], ARG.field, ARG.increment)
end
return false
