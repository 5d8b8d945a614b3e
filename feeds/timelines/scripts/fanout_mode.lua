--- ARGV: threshold pull_below_field pull_since_field big_value boundary
-- Keep an author's fan-out mode in step with their follower count (hybrid fan-out, feeds.timelines.hybrid):
-- past the threshold they become big (merged into each reader's page, not pushed); back at or
-- under it, pushed again. Run after every change of F, so the mode flips as the count crosses.
-- KEYS[1]  F[a], the author's followers (f:{u:a})
-- KEYS[2]  the author's timeline facts (tm:{u:a})
-- threshold  the threshold (FANOUT_PUSH_MAX_FOLLOWERS): big means more followers than this
-- pull_below_field  the field pull_below, pull_since_field the field pull_since
-- big_value  the value of pull_below while big (2^53: above every board id)
-- boundary  the boundary id: pushing stops (becoming big) or starts again (falling back) with the
--          boards from this id on
-- Returns  {1 if big now else 0, 1 if the mode changed in this call else 0, pull_since or false}
local count = redis.call('ZCARD', KEYS[1])
local big = redis.call('HGET', KEYS[2], ARG.pull_below_field) == ARG.big_value
local over = count > tonumber(ARG.threshold)
if over and not big then
    redis.call('HSET', KEYS[2], ARG.pull_below_field, ARG.big_value, ARG.pull_since_field, ARG.boundary)
    return {1, 1, ARG.boundary}
end
local since = redis.call('HGET', KEYS[2], ARG.pull_since_field)
if big and not over then
    redis.call('HSET', KEYS[2], ARG.pull_below_field, ARG.boundary)
    return {0, 1, since}
end
return {big and 1 or 0, 0, since}
