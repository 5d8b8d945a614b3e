#!lua flags=allow-cross-slot-keys
-- Social reading: which of these readers read any of these boards since a cut-off. One call
-- answers many readers (their read sets, user -> boards): the board ids cross the wire once and
-- only the hits come back. A reader's recent reads are walked once and looked up in a table of
-- the asked ids, O(reads); a reader with many more reads than ids asked is probed with
-- ZMSCORE instead, O(ids). (Small sets are listpacks, where each ZMSCORE probe is a scan.)
-- One call serves many readers whose read sets lie on one Redis node, in many slots: declared
-- KEYS would have to share a slot, so the keys come in ARGV (built by social.keys, grouped by
-- ugcsite.redis.run_by_node) and the flag above lets the script touch several slots.
-- KEYS     none
-- ARGV[1]  the cut-off (epoch seconds): older reads do not count
-- ARGV[2]  B, how many board ids follow
-- ARGV[3 .. 2+B]  board ids
-- ARGV[3+B ..]    the read sets r:{u:<id>} of the readers
-- Returns  a flat list of pairs {reader position (1-based, among the read sets), board position
--          (1-based, among the board ids)} for every read found
local cutoff = tonumber(ARGV[1])
local count = tonumber(ARGV[2])
local boards, position = {}, {}
for i = 3, 2 + count do
    boards[#boards + 1] = ARGV[i]
    position[ARGV[i]] = i - 2
end
local first = 3 + count
local found = {}
for k = first, #ARGV do
    local reader = k - first + 1
    if redis.call('ZCARD', ARGV[k]) <= 4 * #boards then
        local recent = redis.call('ZRANGE', ARGV[k], cutoff, '+inf', 'BYSCORE')
        for _, member in ipairs(recent) do
            local b = position[member]
            if b then
                found[#found + 1] = reader
                found[#found + 1] = b
            end
        end
    else
        local scores = redis.call('ZMSCORE', ARGV[k], unpack(boards))
        for b = 1, #boards do
            if scores[b] and tonumber(scores[b]) >= cutoff then
                found[#found + 1] = reader
                found[#found + 1] = b
            end
        end
    end
end
return found
