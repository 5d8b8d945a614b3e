--- ARGV: field value
-- Raise a numeric hash field to a value, never lower it (the archived-max mark of a timeline);
-- a missing field is set to the value, whatever it is.
-- KEYS[1]  the hash (tm:{u:<id>})
-- field  the field, value the value
-- Returns  the field's value afterwards.
local current = redis.call('HGET', KEYS[1], ARG.field)
if not current or tonumber(ARG.value) > tonumber(current) then
    redis.call('HSET', KEYS[1], ARG.field, ARG.value)
    return ARG.value
end
return current
