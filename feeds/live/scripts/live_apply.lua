--- ARGV: kind element_id element points right bottom generation by client_op op log_kept max_elements max_points ttl background width height title
-- Apply one op to a live board and append it to the board's op log, in the board's order: the
-- op gets the next sequence number, and it is in the log (durable) before anyone is told.
-- An element op was validated by the caller against the canvas of generation generation.
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:), KEYS[4] log stream (lo:),
-- KEYS[5]  element ids by right end (lx:), KEYS[6] element ids by bottom end (ly:)
-- kind  kind: add | update | remove | board     element_id element id ('' for board)
-- element element JSON ('' for remove and board)   points  the element's points
-- generation the generation the caller validated an element against (a board op needs none)
-- right bottom  the canvas the element needs (feeds.validation.element_extent; '' for remove and
--   board): the head's width and height grow to hold it (the caller checked it lies within MAX_CANVAS)
-- by  by (username)   client_op client op id   op the op as JSON (what the log keeps)
-- log_kept  the log's length kept (approximate MAXLEN)   max_elements max elements   max_points max points
-- ttl TTL of the live keys (seconds)
-- background width height title  a board op's new values ('' where it leaves one as it is): the
--   head's background, width and height (never smaller than what the elements reach), and the
--   board's title as the live state knows it (the caller wrote it to PostgreSQL, in this lock)
-- Returns  {seq, compacted} once applied, or {reason}: unloaded | stale | exists | missing | elements
--   | points | extents (the state predates lx/ly: feeds.live.oplog.live_extents_fill), or
--   {'smaller', right, bottom}: the elements reach right x bottom, past the width or height asked
local meta, elements, order, log, rights, bottoms = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local kind, id = ARG.kind, ARG.element_id
local state = redis.call('HMGET', meta, 'gen', 'seq', 'compacted', 'n', 'pts')
if not state[1] then return {'unloaded'} end
local n, pts, points = tonumber(state[4]), tonumber(state[5]), tonumber(ARG.points)
if kind == 'board' then
    local head = cjson.decode(redis.call('HGET', meta, 'head'))
    if ARG.width ~= '' or ARG.height ~= '' then
        if redis.call('ZCARD', rights) ~= n or redis.call('ZCARD', bottoms) ~= n then return {'extents'} end
        local right = redis.call('ZRANGE', rights, -1, -1, 'WITHSCORES')[2] or '0'
        local bottom = redis.call('ZRANGE', bottoms, -1, -1, 'WITHSCORES')[2] or '0'
        if (ARG.width ~= '' and tonumber(right) > tonumber(ARG.width))
            or (ARG.height ~= '' and tonumber(bottom) > tonumber(ARG.height)) then
            return {'smaller', right, bottom}
        end
        if ARG.width ~= '' then head.width = tonumber(ARG.width) end
        if ARG.height ~= '' then head.height = tonumber(ARG.height) end
    end
    if ARG.background ~= '' then head.background = ARG.background end
    redis.call('HSET', meta, 'head', cjson.encode(head))
    if ARG.title ~= '' then redis.call('HSET', meta, 'title', ARG.title) end
else
    if state[1] ~= ARG.generation then return {'stale'} end
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
            redis.call('ZREM', rights, id)
            redis.call('ZREM', bottoms, id)
            redis.call('HSET', meta, 'n', n - 1, 'pts', pts - old)
        end
    end
    if kind ~= 'remove' then
        redis.call('ZADD', rights, ARG.right, id)
        redis.call('ZADD', bottoms, ARG.bottom, id)
        local head = cjson.decode(redis.call('HGET', meta, 'head'))
        local right, bottom = tonumber(ARG.right), tonumber(ARG.bottom)
        if right > head.width or bottom > head.height then
            head.width = math.max(head.width, right)
            head.height = math.max(head.height, bottom)
            redis.call('HSET', meta, 'head', cjson.encode(head))
        end
    end
end
local seq = redis.call('HINCRBY', meta, 'seq', 1)
redis.call('XADD', log, 'MAXLEN', '~', ARG.log_kept, seq .. '-1', 'op', ARG.op, 'by', ARG.by, 'cid', ARG.client_op)
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARG.ttl) end
return {seq, tonumber(state[3])}
