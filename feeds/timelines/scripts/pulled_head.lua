--- ARGV: before low count mark_field pull_below_field revision_field
-- The newest ids of a big (or once big) author's M that a reader's feed page merges: strictly
-- below the page's bound and below the author's pull_below (feeds.timelines.hybrid), with M's archived
-- max, so the reader knows whether M's archive must be read too. One call per author, all of a
-- page's calls in one pipeline (each call in its author's slot).
-- KEYS[1]  M[a] (m:{u:a})
-- KEYS[2]  the author's timeline facts (tm:{u:a})
-- before  the page's bound, exclusive: a board id, or "" for none
-- low  the lowest id wanted, inclusive, or "" for none
-- count  how many ids at most (-1: every one)
-- mark_field  the field of M's archived max, pull_below_field the field pull_below,
-- revision_field the field of M's revision (read with the ids: what a feed snapshot checks)
-- Returns  {M's archived max or nil, pull_below or nil, M's revision or nil, ids newest first ...}
-- Ids stay strings throughout: a Lua number would print an 18-digit id in exponent form.
local facts = redis.call('HMGET', KEYS[2], ARG.mark_field, ARG.pull_below_field, ARG.revision_field)
local high = ARG.before
if facts[2] and (high == '' or tonumber(facts[2]) < tonumber(high)) then
    high = facts[2]
end
local range_high = '+inf'
if high ~= '' then
    range_high = '(' .. high
end
local range_low = '-inf'
if ARG.low ~= '' then
    range_low = ARG.low
end
local reply = {facts[1], facts[2], facts[3]}
for _, id in ipairs(redis.call('ZREVRANGEBYSCORE', KEYS[1], range_high, range_low, 'LIMIT', 0, tonumber(ARG.count))) do
    reply[#reply + 1] = id
end
return reply
