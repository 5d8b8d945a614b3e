--- ARGV:
-- A live board's doc as it stands, with the seq it stands at (read in one step, so the doc and
-- the seq agree).
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:)
-- Returns  {gen, seq, compacted, head, title, element JSON...} in drawing order (title false when
--   the state keeps none), or {} when not live.
local state = redis.call('HMGET', KEYS[1], 'gen', 'seq', 'compacted', 'head', 'title')
if not state[1] then return {} end
local ids = redis.call('ZRANGE', KEYS[3], 0, -1)
for _, id in ipairs(ids) do
    state[#state + 1] = redis.call('HGET', KEYS[2], id)
end
return state
