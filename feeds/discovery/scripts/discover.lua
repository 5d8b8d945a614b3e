--- ARGV: offset limit ttl_ms g_before g_after
-- A discovery query: intersect the filter sets with a sort order, page it and count it, in
-- one call. The intersection is cached (with a TTL) for as long as the index generation it
-- was computed at is current. ZINTERSTORE walks the smallest input and probes the others,
-- so the cost grows with the smallest filter set, not with the site.
-- KEYS[1]  the query's cache (sorted set), KEYS[2] its generation (string)
-- KEYS[3]  the index generation counter, KEYS[4] the sort order (sorted set)
-- KEYS[5..] the filter sets (kind, tags, author)
-- offset  offset, limit limit, ttl_ms the cache's TTL in milliseconds
-- g_before, g_after  optional: the G key's text before and after a board id (feeds.keys.parts),
--          on a plain Redis only (G hashes live in other slots): the page's G hashes come back too
-- Returns  {total, {id, id, ...}} best first (ties: the larger id, i.e. the newer board, first),
--          with g_before: {total, ids, {hash, hash, ...}}, each the flat HGETALL of G ({} for a miss)
local offset = tonumber(ARG.offset)
local stop = offset + tonumber(ARG.limit) - 1

local function answer(source)
    local ids = redis.call('ZREVRANGE', source, offset, stop)
    if not ARG.g_before or ARG.g_before == '' then
        return {redis.call('ZCARD', source), ids}
    end
    local hashes = {}
    for i, id in ipairs(ids) do
        hashes[i] = redis.call('HGETALL', ARG.g_before .. id .. ARG.g_after)
    end
    return {redis.call('ZCARD', source), ids, hashes}
end

if #KEYS == 4 then
    return answer(KEYS[4])
end
local generation = redis.call('GET', KEYS[3]) or '0'
if redis.call('GET', KEYS[2]) ~= generation or redis.call('EXISTS', KEYS[1]) == 0 then
    local command = {'ZINTERSTORE', KEYS[1], #KEYS - 3, KEYS[4]}
    for i = 5, #KEYS do command[#command + 1] = KEYS[i] end
    command[#command + 1] = 'WEIGHTS'
    command[#command + 1] = 1
    for i = 5, #KEYS do command[#command + 1] = 0 end
    redis.call(unpack(command))
    redis.call('SET', KEYS[2], generation, 'PX', ARG.ttl_ms)
    redis.call('PEXPIRE', KEYS[1], ARG.ttl_ms)
end
return answer(KEYS[1])
