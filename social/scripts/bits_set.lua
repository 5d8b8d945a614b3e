--- ARGV: member bit on
-- Set or clear one bit of a member's score in a sorted set of bit sums (social.hiding): the
-- score is the sum of the member's bits; a member left with none leaves the set. Idempotent.
-- KEYS[1]  the sorted set (hx:{u:N})
-- member   the member (a user id)
-- bit      the bit's value (1, 2, 4, ...)
-- on       1 to set it, 0 to clear it
-- Returns  the member's score now (0: not in the set). O(log n).
local score = tonumber(redis.call('ZSCORE', KEYS[1], ARG.member) or '0')
local bit = tonumber(ARG.bit)
local has = math.floor(score / bit) % 2 == 1
if ARG.on == '1' and not has then
    score = score + bit
elseif ARG.on ~= '1' and has then
    score = score - bit
end
if score == 0 then
    redis.call('ZREM', KEYS[1], ARG.member)
else
    redis.call('ZADD', KEYS[1], score, ARG.member)
end
return score
