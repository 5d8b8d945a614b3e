--- ARGV: kind element_id element points right bottom generation by client_op op log_kept max_elements max_points ttl
-- Apply one op to a live board and append it to the board's op log, in the board's order: the
-- op gets the next sequence number, and it is in the log (durable) before anyone is told.
-- The element was validated by the caller against the canvas of generation generation.
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:), KEYS[4] log stream (lo:)
-- kind  kind: add | update | remove     element_id element id     element element JSON ('' for remove)
-- points  the element's points            generation the generation the caller validated against
-- right bottom  the canvas the element needs (feeds.validation.element_extent; '' for remove): the
--   head's width and height grow to hold it (the caller checked it lies within MAX_CANVAS)
-- by  by (username)   client_op client op id   op the op as JSON (what the log keeps)
-- log_kept  the log's length kept (approximate MAXLEN)   max_elements max elements   max_points max points
-- ttl TTL of the live keys (seconds)
-- Returns  {seq, compacted} once applied, or {reason}: unloaded | stale | exists | missing | elements | points
local meta, elements, order, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, id = ARG.kind, ARG.element_id
local state = redis.call('HMGET', meta, 'gen', 'seq', 'compacted', 'n', 'pts')
if not state[1] then return {'unloaded'} end
if state[1] ~= ARG.generation then return {'stale'} end
local n, pts, points = tonumber(state[4]), tonumber(state[5]), tonumber(ARG.points)
if kind == 'add' then
    if redis.call('HEXISTS', elements, id) == 1 then return {'exists'} end
    if n + 1 > tonumber(ARG.max_elements) then return {'elements'} end
    if pts + points > tonumber(ARG.max_points) then return {'points'} end
    local z = redis.call('HINCRBY', meta, 'z', 1)
    redis.call('HSET', elements, id, ARG.element, '#' .. id, points)
    redis.call('ZADD', order, z, id)
    redis.call('HSET', meta, 'n', n + 1, 'pts', pts + points)
else
    local old = redis.call('HGET', elements, '#' .. id)
    if not old then return {'missing'} end
    old = tonumber(old)
    if kind == 'update' then
        if pts - old + points > tonumber(ARG.max_points) then return {'points'} end
        redis.call('HSET', elements, id, ARG.element, '#' .. id, points)
        redis.call('HSET', meta, 'pts', pts - old + points)
    else
        redis.call('HDEL', elements, id, '#' .. id)
        redis.call('ZREM', order, id)
        redis.call('HSET', meta, 'n', n - 1, 'pts', pts - old)
    end
end
if kind ~= 'remove' then
    local head = cjson.decode(redis.call('HGET', meta, 'head'))
    local right, bottom = tonumber(ARG.right), tonumber(ARG.bottom)
    if right > head.width or bottom > head.height then
        head.width = math.max(head.width, right)
        head.height = math.max(head.height, bottom)
        redis.call('HSET', meta, 'head', cjson.encode(head))
    end
end
local seq = redis.call('HINCRBY', meta, 'seq', 1)
redis.call('XADD', log, 'MAXLEN', '~', ARG.log_kept, seq .. '-1', 'op', ARG.op, 'by', ARG.by, 'cid', ARG.client_op)
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARG.ttl) end
return {seq, tonumber(state[3])}
