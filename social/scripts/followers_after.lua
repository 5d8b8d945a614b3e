--- ARGV: score after count
-- The next followers of a walk of F (social.graph.followers_batch): the ``count`` members that
-- come after (score, member) in F's order (by score, ties by the members' bytes), wherever
-- that member is now. A rank or an offset would shift when a follower before the cursor leaves
-- F during the walk (an unfollow), and the walk would skip one; (score, member) does not move.
-- KEYS[1]  F of the author
-- score  the score of the last follower visited, after that follower (member), count count
-- Returns  member, score, member, score, ... (as ZRANGE ... WITHSCORES)
local key, score, after, count = KEYS[1], ARG.score, ARG.after, tonumber(ARG.count)

local function le(a, b)  -- a <= b in the byte order Redis sorts tied members by
    local n = math.min(#a, #b)
    for i = 1, n do
        local x, y = string.byte(a, i), string.byte(b, i)
        if x ~= y then
            return x < y
        end
    end
    return #a <= #b
end

-- The members tied at the cursor's score hold ranks [lo, hi); find the first one past ``after``.
local lo = redis.call('ZCOUNT', key, '-inf', '(' .. score)
local hi = redis.call('ZCOUNT', key, '-inf', score)
while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if le(redis.call('ZRANGE', key, mid, mid)[1], after) then
        lo = mid + 1
    else
        hi = mid
    end
end
return redis.call('ZRANGE', key, lo, lo + count - 1, 'WITHSCORES')
