#!lua flags=allow-cross-slot-keys
--- ARGV: author score owner_keys...
-- Add an author to the big-following set fb of several readers, each only while the reader still
-- follows the author (hybrid fan-out: the walk when an author becomes big, and a follow of a big
-- author). An unfollow removes the edge from the following set first and the fb entry after it,
-- so a walk in flight can never leave an entry behind for someone who no longer follows.
-- One call serves many readers whose keys lie on one Redis node (ugcsite.platform.redis.run_by_node), in
-- many slots: the keys come in ARGV, as in home_deliver.lua.
-- KEYS     none
-- author  author id
-- score  the score of a new entry (now, epoch seconds); an entry already there keeps its own
-- owner_keys... pairs: fb[r], following[r], ... (each pair in r's {u:r} slot)
-- Returns  how many entries were added.
local added = 0
for k = ARG.owner_keys_at, #ARGV, 2 do
    if redis.call('ZSCORE', ARGV[k + 1], ARG.author) then
        added = added + redis.call('ZADD', ARGV[k], 'NX', ARG.score, ARG.author)
    end
end
return added
