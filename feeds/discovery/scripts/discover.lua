#!lua flags=allow-cross-slot-keys
--- ARGV: ttl_ms width shards...
-- A discovery query on the shards of one node (feeds.discovery.queries): in each shard, intersect
-- the filter sets with a sort order and read a window of it, in one call for the node. A shard's
-- intersection is cached (with a TTL) for as long as the shard's index generation it was
-- computed at is current. ZINTERSTORE walks the smallest input and probes the others, so the
-- cost grows with the smallest filter set of the shard, not with the site.
-- No declared KEYS: the shards' keys come in ARGV (ugcsite.platform.redis.run_by_node), each shard's in
-- its own slot on this node, so the script declares allow-cross-slot-keys.
-- ttl_ms   the cache's TTL in milliseconds
-- width    the ARGV items of one shard: 6 + the number of filter sets
-- shards   per shard, `width` items: start count cache generation-of-cache index-generation
--          sort-order filter-set... (start, count: the window wanted, ranks best first; no filter
--          set: the sort order itself is read, nothing cached)
-- Returns  per shard {n, lo, {id, score, id, score, ...}}: n the shard's number of matches,
--          lo = min(start, n), and the ranks lo - 1 (the window's sentinel, when lo > 0) to
--          lo + count - 1, best first (ties: the larger member first, as ZREVRANGE orders them)
local ttl = ARG.ttl_ms
local width = tonumber(ARG.width)
local answers = {}

for at = ARG.shards_at, #ARGV, width do
    local start, count = tonumber(ARGV[at]), tonumber(ARGV[at + 1])
    local cache, cached_at, generation_key, order = ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5]
    local source = order
    if width > 6 then
        source = cache
        local generation = redis.call('GET', generation_key) or '0'
        if redis.call('GET', cached_at) ~= generation or redis.call('EXISTS', cache) == 0 then
            local command = {'ZINTERSTORE', cache, width - 5, order}
            for i = at + 6, at + width - 1 do command[#command + 1] = ARGV[i] end
            command[#command + 1] = 'WEIGHTS'
            command[#command + 1] = 1
            for _ = at + 6, at + width - 1 do command[#command + 1] = 0 end
            redis.call(unpack(command))
            redis.call('SET', cached_at, generation, 'PX', ttl)
            redis.call('PEXPIRE', cache, ttl)
        end
    end
    local n = redis.call('ZCARD', source)
    local lo = math.min(start, n)
    local first = lo > 0 and lo - 1 or 0
    local window = {}
    if first < n then
        window = redis.call('ZREVRANGE', source, first, lo + count - 1, 'WITHSCORES')
    end
    answers[#answers + 1] = {n, lo, window}
end
return answers
