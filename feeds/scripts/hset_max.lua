-- Raise a numeric hash field to a value, never lower it (the archived-max mark of a timeline);
-- a missing field is set to the value, whatever it is.
-- KEYS[1]  the hash (tm:{u:<id>})
-- ARGV[1]  the field, ARGV[2] the value
-- Returns  the field's value afterwards.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if not current or tonumber(ARGV[2]) > tonumber(current) then
    redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
    return ARGV[2]
end
return current
