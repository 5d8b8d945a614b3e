-- Put a whole doc into a board's live state: 'load' when the board goes live (only if it is
-- not live already: the state in Redis is newer than PostgreSQL's doc), 'reset' when the doc is
-- replaced whole through the API (only if it is live: the reset is an entry of the log, after
-- every op before it).
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:), KEYS[4] log stream (lo:)
-- ARGV[1]  mode: load | reset   ARGV[2] the seq of the doc (load: the board's live_seq)
-- ARGV[3]  a new generation token   ARGV[4] the doc's head (JSON: width, height, background)
-- ARGV[5]  elements   ARGV[6] points in all   ARGV[7] the log's length kept   ARGV[8] TTL (seconds)
-- ARGV[9]  reset: the doc as JSON (the log entry)   ARGV[10] reset: by (username)
-- ARGV[11..] the elements in order, three arguments each: id, JSON, points
-- Returns  {seq, 1} when this call put the doc in, {seq, 0} when it left things as they were.
local meta, elements, order, log = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local loaded = redis.call('HGET', meta, 'seq')
local seq
if ARGV[1] == 'load' then
    if loaded then return {tonumber(loaded), 0} end
    redis.call('DEL', meta, elements, order, log)
    seq = tonumber(ARGV[2])
    redis.call('HSET', meta, 'seq', seq, 'compacted', seq)
else
    if not loaded then return {0, 0} end
    redis.call('DEL', elements, order)
    seq = redis.call('HINCRBY', meta, 'seq', 1)
    redis.call('XADD', log, 'MAXLEN', '~', ARGV[7], seq .. '-1', 'doc', ARGV[9], 'by', ARGV[10], 'cid', '')
end
redis.call('HSET', meta, 'gen', ARGV[3], 'head', ARGV[4], 'n', ARGV[5], 'pts', ARGV[6], 'z', 0)
local z = 0
for i = 11, #ARGV, 3 do
    z = z + 1
    redis.call('HSET', elements, ARGV[i], ARGV[i + 1], '#' .. ARGV[i], ARGV[i + 2])
    redis.call('ZADD', order, z, ARGV[i])
end
redis.call('HSET', meta, 'z', z)
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[8]) end
return {seq, 1}
