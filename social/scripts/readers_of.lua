#!lua flags=allow-cross-slot-keys
--- ARGV: cutoff count board_ids...
-- Social reading: which of these readers read any of these boards since a cut-off. One call
-- answers many readers: the board ids cross the wire once and only the hits come back. The
-- asked ids go into a scratch set first (an intset: board ids are integers), and each reader's
-- id set rs (the ids of their read set r, kept with it by read_add.lua) is intersected with it
-- in C by SINTER: O(min(reads, N) log N) a reader, and only the hits reach Lua. The hits' read
-- times are checked against the cut-off only when the reader's oldest read is older than it
-- (one O(1) look at the start of r). A reader with reads but no id set (written before id
-- sets existed) is walked as before: their recent reads against a table of the asked ids.
-- One call serves many readers whose keys lie on one Redis node, in many slots: declared KEYS
-- would have to share a slot, so the keys come in ARGV (built by social.keys, grouped by
-- ugcsite.platform.redis.run_by_node) and the flag above lets the script touch several slots. The
-- scratch set is in the first reader's slot, so on the same node, and is deleted before the
-- call returns. On a Redis Cluster one command may not name keys of two slots, even in a script
-- allowed to cross slots, so there (the scratch set "") each reader is answered alone: their
-- recent reads walked against a table of the asked ids, O(reads), or, when they hold many more
-- reads than ids are asked, ZMSCORE of the ids, O(N) probes.
-- KEYS     none
-- cutoff  the cut-off (epoch seconds): older reads do not count; 0 or less, none (every time held
--         is a positive epoch second, so the hits' times are not looked at: the likes)
-- count  B, how many board ids follow
-- board_ids...    B board ids
-- then            the scratch set rq:{u:<first reader>}, or "" on a cluster
-- then            pairs: the read set r:{u:<id>} and the id set rs:{u:<id>} of each reader
-- Returns  a flat list: for each reader with a read found, minus its position (1-based, among the
--          readers), then the position (1-based, among the board ids) of each board it read
--          ({-1, 4, 7, -3, 2}: the first reader read boards 4 and 7, the third board 2), so a
--          reader's position crosses once, not once a hit
local cutoff = tonumber(ARG.cutoff)
local count = tonumber(ARG.count)
local first, last = ARG.board_ids_at, ARG.board_ids_at + count - 1  -- the board ids in ARGV
local position = {}
for i = first, last do
    position[ARGV[i]] = i - first + 1
end
local scratch = ARGV[last + 1]
if scratch ~= '' then
    redis.call('DEL', scratch)
    redis.call('SADD', scratch, unpack(ARGV, first, last))
end

-- The reads of one reader among the asked ids, newer than the cut-off, without the id set.
local function alone(reads)
    local hits = {}
    if redis.call('ZCARD', reads) <= 4 * count then
        for _, member in ipairs(redis.call('ZRANGE', reads, cutoff, '+inf', 'BYSCORE')) do
            if position[member] then
                hits[#hits + 1] = member
            end
        end
    else
        local scores = redis.call('ZMSCORE', reads, unpack(ARGV, first, last))
        for b = 1, count do
            if scores[b] and tonumber(scores[b]) >= cutoff then
                hits[#hits + 1] = ARGV[first + b - 1]
            end
        end
    end
    return hits
end

local found, n = {}, 0
local reader = 0
for k = last + 2, #ARGV, 2 do
    reader = reader + 1
    local reads, ids = ARGV[k], ARGV[k + 1]
    local hits = {}
    if scratch ~= '' then
        hits = redis.call('SINTER', ids, scratch)
    end
    if scratch == '' or (#hits == 0 and redis.call('EXISTS', ids) == 0) then
        hits = alone(reads)
    elseif #hits > 0 and cutoff > 0 then
        local oldest = redis.call('ZRANGE', reads, 0, 0, 'WITHSCORES')
        if oldest[2] and tonumber(oldest[2]) < cutoff then
            local scores = redis.call('ZMSCORE', reads, unpack(hits))
            local recent = {}
            for i = 1, #hits do
                if scores[i] and tonumber(scores[i]) >= cutoff then
                    recent[#recent + 1] = hits[i]
                end
            end
            hits = recent
        end
    end
    if #hits > 0 then
        n = n + 1
        found[n] = -reader
        for i = 1, #hits do
            n = n + 1
            found[n] = position[hits[i]]
        end
    end
end
if scratch ~= '' then
    redis.call('DEL', scratch)
end
return found
