--- ARGV: mode seq generation head elements points log_kept ttl doc by title items...
-- Put a whole doc into a board's live state: 'load' when the board goes live (only if it is
-- not live already: the state in Redis is newer than PostgreSQL's doc), 'reset' when the doc is
-- replaced whole through the API (only if it is live: the reset is an entry of the log, after
-- every op before it).
-- KEYS[1]  meta hash (lm:), KEYS[2] elements hash (le:), KEYS[3] order zset (lz:), KEYS[4] log stream (lo:),
-- KEYS[5]  element ids by right end (lx:), KEYS[6] element ids by bottom end (ly:)
-- mode  mode: load | reset   seq the seq of the doc (load: the board's live_seq)
-- generation  a new generation token   head the doc's head (JSON: width, height, background)
-- elements  elements   points points in all   log_kept the log's length kept   ttl TTL (seconds)
-- doc  reset: the doc as JSON (the log entry)   by reset: by (username)
-- title  load: the board's title (PostgreSQL's, read under the board's row lock); '' for reset
-- items...  the elements in order, five arguments each: id, JSON, points, right end, bottom end
-- Returns  {seq, 1} when this call put the doc in, {seq, 0} when it left things as they were.
local meta, elements, order, log, rights, bottoms = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local loaded = redis.call('HGET', meta, 'seq')
local seq
if ARG.mode == 'load' then
    if loaded then
        -- COMPAT(remove after 2026-12-31): a state loaded by the release before 2026-11-26 keeps
        -- no title; every title change since is written here under the same lock, so this one holds.
        if ARG.title ~= '' then redis.call('HSETNX', meta, 'title', ARG.title) end
        return {tonumber(loaded), 0}
    end
    redis.call('DEL', meta, elements, order, log, rights, bottoms)
    seq = tonumber(ARG.seq)
    redis.call('HSET', meta, 'seq', seq, 'compacted', seq, 'title', ARG.title)
else
    if not loaded then return {0, 0} end
    redis.call('DEL', elements, order, rights, bottoms)
    seq = redis.call('HINCRBY', meta, 'seq', 1)
    redis.call('XADD', log, 'MAXLEN', '~', ARG.log_kept, seq .. '-1', 'doc', ARG.doc, 'by', ARG.by, 'cid', '')
end
redis.call('HSET', meta, 'gen', ARG.generation, 'head', ARG.head, 'n', ARG.elements, 'pts', ARG.points, 'z', 0)
local z = 0
for i = ARG.items_at, #ARGV, 5 do
    z = z + 1
    redis.call('HSET', elements, ARGV[i], ARGV[i + 1], '#' .. ARGV[i], ARGV[i + 2])
    redis.call('ZADD', order, z, ARGV[i])
    redis.call('ZADD', rights, ARGV[i + 3], ARGV[i])
    redis.call('ZADD', bottoms, ARGV[i + 4], ARGV[i])
end
redis.call('HSET', meta, 'z', z)
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARG.ttl) end
return {seq, 1}
