-- A warm page of one timeline (P or M) in one call: the ids, and on a plain Redis (ARGV[7] set)
-- their G hashes and the visibility check, with the reader's activity touch. A page that lies
-- above the timeline's archived max A comes back whole; anything else says why, so the caller
-- goes the longer way (feeds.selectors): a page reaching below A, a returning idle reader whose
-- P waits for regeneration, a reader who follows big authors (hybrid fan-out, feeds.hybrid).
-- Every declared key is the owner's ({u:N}, one slot). G hashes are other slots: they are read
-- here only on a plain Redis, by the key spelling ARGV[7] and ARGV[8] give (feeds.keys.board_parts),
-- never on a cluster (the caller reads them in a pipeline grouped by node instead).
-- KEYS[1]  the timeline (P[u] or M[u]), KEYS[2] the owner's timeline facts tm[u]
-- KEYS[3..5] home only: fb[u] (big followees), following[u], active[u]
-- ARGV[1]  how many ids to read: the page's limit + 1 (the last tells whether more exist)
-- ARGV[2]  offset, or "" when paging by ARGV[3]
-- ARGV[3]  before: a board id (exclusive), or ""
-- ARGV[4]  the field of A in tm[u]
-- ARGV[5]  home only: the active mark's TTL in seconds, or 0 for no touch
-- ARGV[6]  home only: 1 to stop when P waits for regeneration (the field "regenerate" of tm[u])
-- ARGV[7], ARGV[8]  the G key's text before and after the board id; "" when G is not read here
-- Returns {status, A or nil, payload}:
--   "page":  payload = {has_more, the page's last id (or nil), id, hash, id, hash, ...}: a hash
--            is the flat HGETALL of G
--            ({} for a miss, which the caller loads from PostgreSQL; G is not read: all {}).
--            Ids whose author the reader no longer follows are left out and taken out of P.
--   "regenerate": the reader was idle (or P is flagged): regenerate P, then read.
--   "big":   payload = the reader's big followees: the page merges their M (two more trips).
--   "deep":  the page reaches below A (or A is unknown here): the archive is needed.
-- Cost: O(log |T| + limit) plus, with G, O(limit) hash reads and following probes.
local want = tonumber(ARGV[1])
local home = #KEYS >= 5
if home and tonumber(ARGV[5]) > 0 then
    if not redis.call('SET', KEYS[5], '1', 'EX', ARGV[5], 'GET') then
        redis.call('HSET', KEYS[2], 'regenerate', '1')
    end
end
local facts = redis.call('HMGET', KEYS[2], ARGV[4], 'regenerate')
local mark = facts[1]
if home then
    if ARGV[6] == '1' and facts[2] then
        return {'regenerate', mark, {}}
    end
    local big = redis.call('ZRANGE', KEYS[3], 0, -1)
    if #big > 0 then
        return {'big', mark, big}
    end
end
if not mark then
    return {'deep', mark, {}}
end
local archived = tonumber(mark)
local ids
if ARGV[3] ~= '' then
    ids = redis.call('ZREVRANGEBYSCORE', KEYS[1], '(' .. ARGV[3], '-inf', 'LIMIT', 0, want)
    if archived > 0 and not (#ids == want and tonumber(ids[#ids]) > archived) then
        return {'deep', mark, {}}
    end
else
    local offset = tonumber(ARGV[2])
    if archived > 0 and offset + want > redis.call('ZCOUNT', KEYS[1], '(' .. mark, '+inf') then
        return {'deep', mark, {}}
    end
    ids = redis.call('ZREVRANGE', KEYS[1], offset, offset + want - 1)
end
local shown = math.min(#ids, want - 1)
local payload = {#ids == want and 1 or 0, ids[shown] or false}
local read_g = ARGV[7] ~= ''
local followed = {}
for i = 1, shown do
    local id = ids[i]
    local hash = {}
    local keep = true
    if read_g then
        hash = redis.call('HGETALL', ARGV[7] .. id .. ARGV[8])
        if home and #hash > 0 then
            local author
            for f = 1, #hash, 2 do
                if hash[f] == 'author_id' then
                    author = hash[f + 1]
                    break
                end
            end
            if author then
                if followed[author] == nil then
                    followed[author] = redis.call('ZSCORE', KEYS[4], author) ~= false
                end
                keep = followed[author]
            end
        end
    end
    if keep then
        payload[#payload + 1] = id
        payload[#payload + 1] = hash
    else
        redis.call('ZREM', KEYS[1], id)
    end
end
return {'page', mark, payload}
