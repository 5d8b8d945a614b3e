--- ARGV: gate_owner gate_now gate_slice gate_slices gate_allowed...
--- USES: window gate
-- The gate of a signed-in read alone (social.limits.signed_read): the token's cache entry checked
-- and the read limits counted in one call, in the reader's slot (_gate.lua). A feed read does the
-- same inside its page's call (feeds/timelines/scripts/timeline_page.lua).
-- KEYS[1]  the token's cache entry tok[u]; KEYS[2..] the read limits' hashes (the reader's rl[u];
--          on a plain Redis the address's)
-- gate_owner  the user id the token names; gate_now the time in seconds (a float); gate_slice,
--          gate_slices the limits' slice and window; gate_allowed each limit's reads a window
-- Returns {"ok"}, {"token-unknown"}, {"token-refused"} or {"limited", {place, seconds}}
-- Cost O(1) plus O(61) a limit.
local refused = read_gate(1, ARG.gate_owner, tonumber(ARG.gate_now), tonumber(ARG.gate_slice),
    tonumber(ARG.gate_slices), ARG.gate_allowed_at)
if refused == nil then
    return {'ok'}
elseif type(refused) == 'table' then
    return {'limited', refused}
end
return {refused}
