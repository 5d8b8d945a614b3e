--- ARGV: want offset before mark_field touch_ttl stop_if_regenerate g_before g_after m_before m_after tm_before tm_after m_mark_field pull_below_field merge_max p_revision_field m_revision_field snapshot_width gate_owner gate_now gate_slice gate_slices gate_allowed...
--- USES: window gate
-- A warm page of one timeline (P or M) in one call: the ids, and on a plain Redis (g_before set)
-- their G hashes and the visibility check, with the reader's activity touch. A page that lies
-- above the timeline's archived max A comes back whole; anything else says why, so the caller
-- goes the longer way (feeds.selectors): a page reaching below A, a returning idle reader whose
-- P waits for regeneration. On a plain Redis a home page of a reader who follows big authors
-- (hybrid fan-out, feeds.timelines.hybrid) merges their M here too, each below its pull_below, when every
-- head reaches above its own A and the merge reads at most merge_max ids; otherwise, and always
-- on a cluster, it answers "big" and the caller merges (feeds.timelines.pages.home_page).
-- A home page that cannot be made so is read from the reader's feed snapshot when one holds it
-- (feeds.timelines.snapshot): a range of a string, once every fact the snapshot was made from is
-- checked (on a cluster the big followees' facts lie in other slots: "snapshot" hands them over).
-- Every declared key is the owner's ({u:N}, one slot). G hashes, and the big authors' M and tm,
-- are other slots: they are read here only on a plain Redis, by the key spellings g_before .. tm_after
-- give (feeds.keys.parts), never on a cluster (the caller reads them by node instead).
-- KEYS[1]  the timeline (P[u] or M[u]), KEYS[2] the owner's timeline facts tm[u]
-- KEYS[3..6] home only: fb[u] (big followees), following[u], active[u], hx[u] (whom u does not see)
-- KEYS[7..8] home only: the feed snapshot fs[u] and its facts fsf[u]
-- KEYS[9..] a signed-in read's gate, home only (social.limits.ReadGate): the reader's bearer
--          token's cache entry tok[u] (social.token_cache), then the hash of each read limit
--          it counts (ugcsite.platform.ratelimits): the reader's rl[u], and on a plain Redis the
--          address's (another slot: never on a cluster)
-- want  how many ids to read: the page's limit + 1 (the last tells whether more exist)
-- offset  offset, or "" when paging by before
-- before  before: a board id (exclusive), or ""
-- mark_field  the field of A in tm[u]
-- touch_ttl  home only: the active mark's TTL in seconds, or 0 for no touch
-- stop_if_regenerate  home only: 1 to stop when P waits for regeneration (the field "regenerate" of tm[u])
-- g_before, g_after  the G key's text before and after the board id; "" when G is not read here
-- m_before, m_after  the M key's text before and after a user id ("" when G is not read here)
-- tm_before, tm_after the tm key's text before and after a user id
-- m_mark_field, pull_below_field the fields of M's A and of pull_below in tm[a]
-- merge_max the most ids a merge with big followees' M may read here (0: never merge here)
-- p_revision_field, m_revision_field the fields of P's and M's revisions in tm (feeds.timelines.store)
-- snapshot_width  the bytes of one id in the feed snapshot (an unsigned big-endian integer)
-- gate_owner  the user id the token names ("" with no gate); gate_now the time in seconds (a
--          float); gate_slice, gate_slices the limits' slice and window (_window.lua)
-- gate_allowed  each read limit's reads a window, in KEYS' order from KEYS[10]
-- Returns {status, A or nil, payload}. With a gate (social/scripts/_gate.lua), before anything
-- is read or written:
--   "token-unknown": no entry for the token (the caller checks it the longer way, which fills
--            it); "token-refused": revoked (the tombstone "-"), expired, or another person's;
--   "limited": payload = {the refusing limit's place from 1, the seconds until it counts one}:
--            the limits before it counted the read, the ones after it did not.
--   "page":  payload = {has_more, the page's last id (or nil), id, hash, id, hash, ...}: a hash
--            is the flat HGETALL of G
--            ({} for a miss, which the caller loads from PostgreSQL; G is not read: all {}).
--            Ids whose author the reader no longer follows are left out and taken out of P (its
--            revision bumped); ids whose author the reader does not see (hx[u]) are left out and stay.
--   "regenerate": the reader was idle (or P is flagged): regenerate P, then read.
--   "big":   payload = the reader's big followees: the caller merges their M (two more trips).
--   "deep":  the page reaches below A (or A is unknown here): the archive is needed.
--   "snapshot": (cluster) payload = {the big followees, {ids of the page and one more},
--            {author, facts, author, facts, ...}}: the snapshot holds the page if each big
--            followee's M revision and pull_below are still the facts given ("revision:pull_below").
--   "big", "deep" and "snapshot" of a home page carry a fourth element, the reader's facts a
--   snapshot is kept by, read before anything the caller reads next: {P's size, its oldest id or
--   nil, its revision or nil}.
-- Cost: a gate O(1) plus O(61) a limit; then O(log |T| + limit) plus, with G, O(limit) hash reads and following probes; merging k big
-- followees' M adds O(k log |M| + n log n) for the n <= merge_max ids read; a snapshot's page
-- O(k + limit + log |S|) for a snapshot of |S| ids.
-- Ids stay strings, compared as numbers: every board id is below 2^53, exact in a Lua number.
if ARG.gate_owner ~= '' then
    local refused = read_gate(9, ARG.gate_owner, tonumber(ARG.gate_now), tonumber(ARG.gate_slice),
        tonumber(ARG.gate_slices), ARG.gate_allowed_at)
    if type(refused) == 'table' then
        return {'limited', false, refused}
    elseif refused then
        return {refused, false, {}}
    end
end
local want = tonumber(ARG.want)
local home = #KEYS >= 5
if home and tonumber(ARG.touch_ttl) > 0 then
    if not redis.call('SET', KEYS[5], '1', 'EX', ARG.touch_ttl, 'GET') then
        redis.call('HSET', KEYS[2], 'regenerate', '1')
    end
end
local facts = redis.call('HMGET', KEYS[2], ARG.mark_field, 'regenerate', ARG.p_revision_field)
local mark = facts[1]
local big = {}
if home then
    if ARG.stop_if_regenerate == '1' and facts[2] then
        return {'regenerate', mark, {}}
    end
    big = redis.call('ZRANGE', KEYS[3], 0, -1)
end
local archived = tonumber(mark or '0')

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

-- The page's ids from the heads alone, or nil and the status that sends the caller the longer way.
local function page_ids()
    if not mark then
        return nil, #big > 0 and 'big' or 'deep'
    end
    if #big > 0 then
        local offset = ARG.before == '' and tonumber(ARG.offset) or 0
        local count = offset + want
        if ARG.m_before == '' or count * (#big + 1) > tonumber(ARG.merge_max) then
            return nil, 'big'
        end
        local all = head(KEYS[1], ARG.before, count, archived)
        if not all then
            return nil, 'big'
        end
        for _, author in ipairs(big) do
            local facts_a = redis.call('HMGET', ARG.tm_before .. author .. ARG.tm_after, ARG.m_mark_field, ARG.pull_below_field)
            if not facts_a[1] then
                return nil, 'big'  -- M's A unknown here (Redis lost it): the caller reads it
            end
            local high = ARG.before
            if facts_a[2] and (high == '' or tonumber(facts_a[2]) < tonumber(high)) then
                high = facts_a[2]
            end
            local m = head(ARG.m_before .. author .. ARG.m_after, high, count, tonumber(facts_a[1]))
            if not m then
                return nil, 'big'
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
        local ids = {}
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
        return ids
    end
    if ARG.before ~= '' then
        local ids = head(KEYS[1], ARG.before, want, archived)
        if not ids then
            return nil, 'deep'
        end
        return ids
    end
    local offset = tonumber(ARG.offset)
    if archived > 0 and offset + want > redis.call('ZCOUNT', KEYS[1], '(' .. mark, '+inf') then
        return nil, 'deep'
    end
    return redis.call('ZREVRANGE', KEYS[1], offset, offset + want - 1)
end

-- The page's ids from the reader's feed snapshot (feeds.timelines.snapshot), when it still holds:
-- nil when there is none, a fact changed or it does not reach the page's end; on a cluster the
-- big followees' facts are not checked here but returned (ids, {author, facts, ...}).
local function snapshot_ids()
    local stored = redis.call('HGETALL', KEYS[8])
    if #stored == 0 then
        return nil
    end
    local s = {}
    for i = 1, #stored, 2 do
        s[stored[i]] = stored[i + 1]
    end
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)[1] or ''
    if s.p_size ~= tostring(redis.call('ZCARD', KEYS[1])) or s.p_oldest ~= oldest
        or s.p_revision ~= (facts[3] or '') or s.archived ~= (mark or '') or s.big ~= table.concat(big, ',') then
        return nil
    end
    local unchecked = {}
    for _, author in ipairs(big) do
        if ARG.tm_before == '' then
            unchecked[#unchecked + 1] = author
            unchecked[#unchecked + 1] = s['m:' .. author]
        else
            local m = redis.call('HMGET', ARG.tm_before .. author .. ARG.tm_after, ARG.m_revision_field, ARG.pull_below_field)
            if s['m:' .. author] ~= (m[1] or '') .. ':' .. (m[2] or '') then
                return nil
            end
        end
    end
    local size = tonumber(s.size)
    local width = tonumber(ARG.snapshot_width)
    local packed = '>I' .. width
    if redis.call('STRLEN', KEYS[7]) ~= size * width then
        return nil  -- the ids expired before their facts
    end
    local start = tonumber(ARG.offset)
    if ARG.before == '' and s.top ~= '' then
        return nil  -- it starts below an id, not at the top: it knows no offsets
    elseif ARG.before ~= '' and s.top ~= '' and tonumber(ARG.before) > tonumber(s.top) then
        return nil  -- the page starts above it
    elseif ARG.before ~= '' then
        -- the first position holding an id below `before`: a binary search, ids newest first
        local low, high = 0, size
        local bound = tonumber(ARG.before)
        while low < high do
            local middle = math.floor((low + high) / 2)
            if struct.unpack(packed, redis.call('GETRANGE', KEYS[7], middle * width, (middle + 1) * width - 1)) < bound then
                high = middle
            else
                low = middle + 1
            end
        end
        start = low
    end
    if start + want > size and s.whole ~= '1' then
        return nil
    end
    local ids = {}
    local text = redis.call('GETRANGE', KEYS[7], start * width, (start + want) * width - 1)
    for i = 1, #text, width do
        ids[#ids + 1] = string.format('%.0f', (struct.unpack(packed, text, i)))  -- exact below 2^53
    end
    return ids, unchecked
end

local ids, status = page_ids()
local reader = {}  -- a home page's own facts, for the caller to merge and keep a snapshot by
if not ids and home and #KEYS >= 8 then
    local unchecked
    ids, unchecked = snapshot_ids()
    reader = {redis.call('ZCARD', KEYS[1]), redis.call('ZRANGE', KEYS[1], 0, 0)[1] or false, facts[3] or false}
    if ids and #unchecked > 0 then
        return {'snapshot', mark, {big, ids, unchecked}, reader}
    end
end
if not ids then
    return {status, mark, status == 'big' and big or {}, reader}
end
local shown = math.min(#ids, want - 1)
local payload = {#ids == want and 1 or 0, ids[shown] or false}
local read_g = ARG.g_before ~= ''
local followed = {}
local removed = 0
for i = 1, shown do
    local id = ids[i]
    local hash = {}
    local shows = 'keep'
    if read_g then
        hash = redis.call('HGETALL', ARG.g_before .. id .. ARG.g_after)
        if home and #hash > 0 then
            shows = home_shows(hash, KEYS[4], KEYS[6], followed)
        end
    end
    if shows == 'keep' then
        payload[#payload + 1] = id
        payload[#payload + 1] = hash
    elseif shows == 'gone' then
        removed = removed + redis.call('ZREM', KEYS[1], id)
    end
end
if removed > 0 then
    redis.call('HINCRBY', KEYS[2], ARG.p_revision_field, 1)
end
return {'page', mark, payload}
