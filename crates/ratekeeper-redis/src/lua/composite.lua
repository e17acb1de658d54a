-- Several limits on one key, all or nothing (as ratekeeper-core's
-- composite.rs): every part is first asked whether it would admit (its own
-- script's "peek"); only if all would is the cost taken from each ("check"),
-- on the same state at the same time (this one script run), so the answers
-- cannot change in between. A refusal writes nothing anywhere. (One part
-- is checked without a peek first: see "direct" below.)
--
-- Each algorithm's script is included above as a function of its own KEYS
-- and ARGV (`RUN[<algorithm>]`), sharing NOW: the parts decide at one time.
--
-- KEYS     every part's keys, part after part (all under one hash tag)
-- ARGV[1]  "check" | "peek" | "refund";  ARGV[2] cost;  ARGV[3] parts
-- then per part: its algorithm's name, its number of keys, its number of
-- parameters, and the parameters (the registry's order)
--
-- Reply: 0 for "refund"; otherwise one array per part, in order: its
-- Decision's seven integers, or for GCRA { lead, at_cost } (the TAT's lead,
-- and 1 when the client decides with the request's cost, 0 with a look of
-- 0: `Gcra::decide_ahead`; a flag rather than the cost, which a Lua number
-- cannot carry back exactly above 2^53). In a
-- refusal, a part that would have admitted shows its state untouched (a
-- look of cost 0), as the in-process composite shows it.

local op = ARGV[1]
local cost = ARGV[2]
local c = tonumber(cost)
local parts = {}
local a, k = 4, 1
for i = 1, tonumber(ARGV[3]) do
  local kind, nkeys, nparams = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  local keys, params = {}, {}
  for j = 1, nkeys do keys[j] = KEYS[k]; k = k + 1 end
  for j = 1, nparams do params[j] = ARGV[a + 2 + j] end
  a = a + 3 + nparams
  parts[i] = { kind = kind, keys = keys, params = params }
end

-- One part's script for `what` at cost `n` (text, as its script reads it).
local function run(part, what, n)
  local argv
  if part.kind == 'gcra' then
    argv = { what }
    for _, p in ipairs(part.params) do argv[#argv + 1] = p end
    argv[#argv + 1] = n
  else
    argv = { what, n }
    for _, p in ipairs(part.params) do argv[#argv + 1] = p end
  end
  return RUN[part.kind](part.keys, argv)
end

local function failed(reply)
  return type(reply) == 'table' and reply.err ~= nil
end

-- Whether a part's peek at cost `n` admits: its Decision says so; GCRA's
-- lead does when the pushed TAT stays within the tolerance (its script's
-- own rule; a cost of 0 is a look, always admitted).
local function admits(part, reply, n)
  if part.kind ~= 'gcra' then return reply[1] == 1 end
  if n == 0 then return true end
  local interval = part.params[3] + 0
  local tolerance = interval * (part.params[1] + 1)
  return reply + interval * n <= tolerance
end

local function shown(part, reply, at_cost)
  if part.kind == 'gcra' then return { reply, at_cost } end
  return reply
end

if op == 'refund' then
  for _, part in ipairs(parts) do
    local reply = run(part, 'refund', cost)
    if failed(reply) then return reply end
  end
  return 0
end

-- A check peeks at every part but one, and checks that one directly: a
-- check that refuses writes nothing (its decision is the peek's), so when
-- it admits, the others (which would admit) are checked too, and when it
-- refuses, nothing was written anywhere. That saves a run of that part's
-- script on every admitted request (a composite of two: three runs
-- instead of four). Not a sliding log: its refused check still records
-- the time and drops what slid out.
local direct = nil
if op == 'check' and c > 0 then
  for i = #parts, 1, -1 do
    if parts[i].kind ~= 'sliding_log' then direct = i; break end
  end
end

local peeks, all = {}, true
for i, part in ipairs(parts) do
  if i ~= direct then
    local reply = run(part, 'peek', cost)
    if failed(reply) then return reply end
    peeks[i] = reply
    if not admits(part, reply, c) then all = false end
  end
end

local out = {}
if direct and all then
  local reply = run(parts[direct], 'check', cost)
  if failed(reply) then return reply end
  if admits(parts[direct], reply, c) then
    for i, part in ipairs(parts) do
      if i == direct then
        out[i] = shown(part, reply, 1)
      else
        local checked = run(part, 'check', cost)
        if failed(checked) then return checked end
        out[i] = shown(part, checked, 1)
      end
    end
    return out
  end
  -- Refused by it, and nothing written: its decision is its peek's.
  peeks[direct], all = reply, false
elseif direct then
  -- Refused already: that part is only looked at.
  local reply = run(parts[direct], 'peek', cost)
  if failed(reply) then return reply end
  peeks[direct] = reply
end
if op == 'check' and all and c > 0 then
  -- (Only sliding logs: every part peeked, and each admits.)
  for i, part in ipairs(parts) do
    local reply = run(part, 'check', cost)
    if failed(reply) then return reply end
    out[i] = shown(part, reply, 1)
  end
  return out
end
for i, part in ipairs(parts) do
  if not all and admits(part, peeks[i], c) then
    -- Nothing was taken from it: its state as it is.
    local reply = run(part, 'peek', '0')
    if failed(reply) then return reply end
    out[i] = shown(part, reply, 0)
  else
    out[i] = shown(part, peeks[i], 1)
  end
end
return out
