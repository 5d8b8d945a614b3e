-- Functions the timeline scripts share: ugcsite.redis.Scripts puts this file before each body
-- of this folder (after the script's #!lua line and its ARG table).

-- Whether a home page keeps a board whose G hash is `hash` (a flat HGETALL, not empty): its
-- author is still in `following` (the reader's following set), asked once per author
-- (`followed` remembers the answers of one call). A hash without an author is kept.
local function still_followed(hash, following, followed)
    for f = 1, #hash, 2 do
        if hash[f] == 'author_id' then
            local author = hash[f + 1]
            if followed[author] == nil then
                followed[author] = redis.call('ZSCORE', following, author) ~= false
            end
            return followed[author]
        end
    end
    return true
end
