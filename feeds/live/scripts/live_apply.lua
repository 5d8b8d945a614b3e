-- Apply one op to a live board and append it to the board's op log, in the board's order: the
-- op gets the next sequence number, and it is in the log (durable) before anyone is told.
-- The element was validated by the caller against the canvas of generation ARGV[5].
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:), KEYS[4] log stream (lo:)
-- ARGV[1]  kind: add | update | remove     ARGV[2] element id     ARGV[3] element JSON ('' for remove)
-- ARGV[4]  the element's points            ARGV[5] the generation the caller validated against
-- ARGV[6]  by (username)   ARGV[7] client op id   ARGV[8] the op as JSON (what the log keeps)
-- ARGV[9]  the log's length kept (approximate MAXLEN)   ARGV[10] max elements   ARGV[11] max points
-- ARGV[12] TTL of the live keys (seconds)
-- Returns  {seq, compacted} once applied, or {reason}: unloaded | stale | exists | missing | elements | points
local meta, elements, order, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, id = ARGV[1], ARGV[2]
local state = redis.call('HMGET', meta, 'gen', 'seq', 'compacted', 'n', 'pts')
if not state[1] then return {'unloaded'} end
if state[1] ~= ARGV[5] then return {'stale'} end
local n, pts, points = tonumber(state[4]), tonumber(state[5]), tonumber(ARGV[4])
if kind == 'add' then
    if redis.call('HEXISTS', elements, id) == 1 then return {'exists'} end
    if n + 1 > tonumber(ARGV[10]) then return {'elements'} end
    if pts + points > tonumber(ARGV[11]) then return {'points'} end
    local z = redis.call('HINCRBY', meta, 'z', 1)
    redis.call('HSET', elements, id, ARGV[3], '#' .. id, points)
    redis.call('ZADD', order, z, id)
    redis.call('HSET', meta, 'n', n + 1, 'pts', pts + points)
else
    local old = redis.call('HGET', elements, '#' .. id)
    if not old then return {'missing'} end
    old = tonumber(old)
    if kind == 'update' then
        if pts - old + points > tonumber(ARGV[11]) then return {'points'} end
        redis.call('HSET', elements, id, ARGV[3], '#' .. id, points)
        redis.call('HSET', meta, 'pts', pts - old + points)
    else
        redis.call('HDEL', elements, id, '#' .. id)
        redis.call('ZREM', order, id)
        redis.call('HSET', meta, 'n', n - 1, 'pts', pts - old)
    end
end
local seq = redis.call('HINCRBY', meta, 'seq', 1)
redis.call('XADD', log, 'MAXLEN', '~', ARGV[9], seq .. '-1', 'op', ARGV[8], 'by', ARGV[6], 'cid', ARGV[7])
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[12]) end
return {seq, tonumber(state[3])}
