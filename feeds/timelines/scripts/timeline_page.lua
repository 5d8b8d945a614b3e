-- A warm page of one timeline (P or M) in one call: the ids, and on a plain Redis (ARGV[7] set)
-- their G hashes and the visibility check, with the reader's activity touch. A page that lies
-- above the timeline's archived max A comes back whole; anything else says why, so the caller
-- goes the longer way (feeds.selectors): a page reaching below A, a returning idle reader whose
-- P waits for regeneration. On a plain Redis a home page of a reader who follows big authors
-- (hybrid fan-out, feeds.timelines.hybrid) merges their M here too, each below its pull_below, when every
-- head reaches above its own A and the merge reads at most ARGV[15] ids; otherwise, and always
-- on a cluster, it answers "big" and the caller merges (feeds.timelines.pages.home_page).
-- Every declared key is the owner's ({u:N}, one slot). G hashes, and the big authors' M and tm,
-- are other slots: they are read here only on a plain Redis, by the key spellings ARGV[7..12]
-- give (feeds.keys.parts), never on a cluster (the caller reads them by node instead).
-- KEYS[1]  the timeline (P[u] or M[u]), KEYS[2] the owner's timeline facts tm[u]
-- KEYS[3..5] home only: fb[u] (big followees), following[u], active[u]
-- ARGV[1]  how many ids to read: the page's limit + 1 (the last tells whether more exist)
-- ARGV[2]  offset, or "" when paging by ARGV[3]
-- ARGV[3]  before: a board id (exclusive), or ""
-- ARGV[4]  the field of A in tm[u]
-- ARGV[5]  home only: the active mark's TTL in seconds, or 0 for no touch
-- ARGV[6]  home only: 1 to stop when P waits for regeneration (the field "regenerate" of tm[u])
-- ARGV[7], ARGV[8]  the G key's text before and after the board id; "" when G is not read here
-- ARGV[9], ARGV[10]  the M key's text before and after a user id ("" when G is not read here)
-- ARGV[11], ARGV[12] the tm key's text before and after a user id
-- ARGV[13], ARGV[14] the fields of M's A and of pull_below in tm[a]
-- ARGV[15] the most ids a merge with big followees' M may read here (0: never merge here)
-- Returns {status, A or nil, payload}:
--   "page":  payload = {has_more, the page's last id (or nil), id, hash, id, hash, ...}: a hash
--            is the flat HGETALL of G
--            ({} for a miss, which the caller loads from PostgreSQL; G is not read: all {}).
--            Ids whose author the reader no longer follows are left out and taken out of P.
--   "regenerate": the reader was idle (or P is flagged): regenerate P, then read.
--   "big":   payload = the reader's big followees: the caller merges their M (two more trips).
--   "deep":  the page reaches below A (or A is unknown here): the archive is needed.
-- Cost: O(log |T| + limit) plus, with G, O(limit) hash reads and following probes; merging k big
-- followees' M adds O(k log |M| + n log n) for the n <= ARGV[15] ids read.
-- Ids stay strings, compared as numbers: every board id is below 2^53, exact in a Lua number.
local want = tonumber(ARGV[1])
local home = #KEYS >= 5
if home and tonumber(ARGV[5]) > 0 then
    if not redis.call('SET', KEYS[5], '1', 'EX', ARGV[5], 'GET') then
        redis.call('HSET', KEYS[2], 'regenerate', '1')
    end
end
local facts = redis.call('HMGET', KEYS[2], ARGV[4], 'regenerate')
local mark = facts[1]
local big = {}
if home then
    if ARGV[6] == '1' and facts[2] then
        return {'regenerate', mark, {}}
    end
    big = redis.call('ZRANGE', KEYS[3], 0, -1)
end
if not mark then
    return {#big > 0 and 'big' or 'deep', mark, #big > 0 and big or {}}
end
local archived = tonumber(mark)

-- The newest `count` ids of a sorted set strictly below `high` ("" for no bound), or nil when
-- they do not all lie above the set's archived max (the archive below would be needed).
local function head(key, high, count, set_archived)
    local top = '+inf'
    if high ~= '' then
        top = '(' .. high
    end
    local found = redis.call('ZREVRANGEBYSCORE', key, top, '-inf', 'LIMIT', 0, count)
    if set_archived > 0 and not (#found == count and tonumber(found[#found]) > set_archived) then
        return nil
    end
    return found
end

local ids
if #big > 0 then
    local offset = ARGV[3] == '' and tonumber(ARGV[2]) or 0
    local count = offset + want
    if ARGV[9] == '' or count * (#big + 1) > tonumber(ARGV[15]) then
        return {'big', mark, big}
    end
    local all = head(KEYS[1], ARGV[3], count, archived)
    if not all then
        return {'big', mark, big}
    end
    for _, author in ipairs(big) do
        local facts_a = redis.call('HMGET', ARGV[11] .. author .. ARGV[12], ARGV[13], ARGV[14])
        if not facts_a[1] then
            return {'big', mark, big}  -- M's A unknown here (Redis lost it): the caller reads it
        end
        local high = ARGV[3]
        if facts_a[2] and (high == '' or tonumber(facts_a[2]) < tonumber(high)) then
            high = facts_a[2]
        end
        local m = head(ARGV[9] .. author .. ARGV[10], high, count, tonumber(facts_a[1]))
        if not m then
            return {'big', mark, big}
        end
        for _, id in ipairs(m) do
            all[#all + 1] = id
        end
    end
    local value = {}
    for _, id in ipairs(all) do
        value[id] = tonumber(id)
    end
    table.sort(all, function(a, b) return value[a] > value[b] end)
    ids = {}
    local seen = 0
    for i, id in ipairs(all) do
        if i == 1 or id ~= all[i - 1] then
            seen = seen + 1
            if seen > offset then
                ids[#ids + 1] = id
                if #ids == want then
                    break
                end
            end
        end
    end
elseif ARGV[3] ~= '' then
    ids = head(KEYS[1], ARGV[3], want, archived)
    if not ids then
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
