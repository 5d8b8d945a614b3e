-- Functions the timeline scripts share: ugcsite.platform.redis.Scripts puts this file before each body
-- of this folder (after the script's #!lua line and its ARG table).

-- What a home page does with a board whose G hash is `hash` (a flat HGETALL, not empty), by its
-- author: 'gone' when the reader no longer follows them (`following`, their following set: the
-- id leaves P), 'hidden' when the reader blocks, is blocked by or mutes them (`hidden`, their
-- hidden set, social.hiding: the id stays, for an unmute), else 'keep'. Each author is asked
-- once per call (`answers` remembers). A hash without an author is kept.
local function home_shows(hash, following, hidden, answers)
    for f = 1, #hash, 2 do
        if hash[f] == 'author_id' then
            local author = hash[f + 1]
            if answers[author] == nil then
                if redis.call('ZSCORE', following, author) == false then
                    answers[author] = 'gone'
                elseif redis.call('ZSCORE', hidden, author) ~= false then
                    answers[author] = 'hidden'
                else
                    answers[author] = 'keep'
                end
            end
            return answers[author]
        end
    end
    return 'keep'
end
