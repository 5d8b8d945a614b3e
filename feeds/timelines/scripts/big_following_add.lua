#!lua flags=allow-cross-slot-keys
-- Add an author to the big-following set fb of several readers, each only while the reader still
-- follows the author (hybrid fan-out: the walk when an author becomes big, and a follow of a big
-- author). An unfollow removes the edge from the following set first and the fb entry after it,
-- so a walk in flight can never leave an entry behind for someone who no longer follows.
-- One call serves many readers whose keys lie on one Redis node (ugcsite.redis.run_by_node), in
-- many slots: the keys come in ARGV, as in home_deliver.lua.
-- KEYS     none
-- ARGV[1]  author id
-- ARGV[2]  the score of a new entry (now, epoch seconds); an entry already there keeps its own
-- ARGV[3 ..] pairs: fb[r], following[r], ... (each pair in r's {u:r} slot)
-- Returns  how many entries were added.
local added = 0
for k = 3, #ARGV, 2 do
    if redis.call('ZSCORE', ARGV[k + 1], ARGV[1]) then
        added = added + redis.call('ZADD', ARGV[k], 'NX', ARGV[2], ARGV[1])
    end
end
return added
