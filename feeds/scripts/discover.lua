-- A discovery query: intersect the filter sets with a sort order, page it and count it, in
-- one call. The intersection is cached (with a TTL) for as long as the index generation it
-- was computed at is current. ZINTERSTORE walks the smallest input and probes the others,
-- so the cost grows with the smallest filter set, not with the site.
-- KEYS[1]  the query's cache (sorted set), KEYS[2] its generation (string)
-- KEYS[3]  the index generation counter, KEYS[4] the sort order (sorted set)
-- KEYS[5..] the filter sets (kind, tags, author)
-- ARGV[1]  offset, ARGV[2] limit, ARGV[3] the cache's TTL in milliseconds
-- Returns  {total, {id, id, ...}} best first (ties: the larger id, i.e. the newer board, first)
local offset = tonumber(ARGV[1])
local stop = offset + tonumber(ARGV[2]) - 1
if #KEYS == 4 then
    return {redis.call('ZCARD', KEYS[4]), redis.call('ZREVRANGE', KEYS[4], offset, stop)}
end
local generation = redis.call('GET', KEYS[3]) or '0'
if redis.call('GET', KEYS[2]) ~= generation or redis.call('EXISTS', KEYS[1]) == 0 then
    local command = {'ZINTERSTORE', KEYS[1], #KEYS - 3, KEYS[4]}
    for i = 5, #KEYS do command[#command + 1] = KEYS[i] end
    command[#command + 1] = 'WEIGHTS'
    command[#command + 1] = 1
    for i = 5, #KEYS do command[#command + 1] = 0 end
    redis.call(unpack(command))
    redis.call('SET', KEYS[2], generation, 'PX', ARGV[3])
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return {redis.call('ZCARD', KEYS[1]), redis.call('ZREVRANGE', KEYS[1], offset, stop)}
