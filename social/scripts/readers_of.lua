-- Social reading: which of these readers read any of these boards since a cut-off. One call
-- answers many readers (their read sets, user -> boards): the board ids cross the wire once and
-- only the hits come back. A reader's recent reads are walked once and looked up in a table of
-- the asked ids, O(reads); a reader with many more reads than ids asked is probed with
-- ZMSCORE instead, O(ids). (Small sets are listpacks, where each ZMSCORE probe is a scan.)
-- KEYS     the read sets r:{u:<id>} of the readers (on a Redis Cluster, one slot per call:
--          social.reading groups them)
-- ARGV[1]  the cut-off (epoch seconds): older reads do not count
-- ARGV[2..] board ids
-- Returns  a flat list of pairs {reader position (1-based, in KEYS), board position (1-based,
--          in ARGV[2..])} for every read found
local cutoff = tonumber(ARGV[1])
local boards, position = {}, {}
for i = 2, #ARGV do
    boards[#boards + 1] = ARGV[i]
    position[ARGV[i]] = i - 1
end
local found = {}
for k = 1, #KEYS do
    if redis.call('ZCARD', KEYS[k]) <= 4 * #boards then
        local recent = redis.call('ZRANGE', KEYS[k], cutoff, '+inf', 'BYSCORE')
        for _, member in ipairs(recent) do
            local b = position[member]
            if b then
                found[#found + 1] = k
                found[#found + 1] = b
            end
        end
    else
        local scores = redis.call('ZMSCORE', KEYS[k], unpack(boards))
        for b = 1, #boards do
            if scores[b] and tonumber(scores[b]) >= cutoff then
                found[#found + 1] = k
                found[#found + 1] = b
            end
        end
    end
end
return found
