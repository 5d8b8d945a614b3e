-- Add to a field of a hash only if the hash exists (a cache entry is never half-created).
-- KEYS[1]  the hash (a G board cache entry)
-- ARGV[1]  the field, ARGV[2] the increment
-- Returns  the new value, or false when the hash does not exist.
if redis.call('EXISTS', KEYS[1]) == 1 then
    return redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
end
return false
