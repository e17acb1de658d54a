-- GCRA with redis-cell's CL.THROTTLE reply, as ratekeeper-core's gcra.rs.
--
-- Times are counted in ticks of 1/count microsecond, so the emission
-- interval (period / count) is exact. The theoretical arrival time (TAT) is
-- stored relative to the time of the last write — "base offset", the base
-- in µs and the offset in ticks, one string — so every number the script
-- computes stays below the tolerance (period × limit) and is exact while
-- that is below 2^53.
--
-- Written straight through, without local functions: a script's closures
-- are garbage after every call, and under load the Lua collector's work
-- costs Redis more than the arithmetic (floor_div and ceil_div of
-- decision.lua are spelled out where they are needed).
--
-- KEYS[1]  the state (a string: "base offset")
-- ARGV[1]  "check" | "peek" | "lease:N" (take up to N units if that covers
--          the cost, replying with how many after the Decision)
-- ARGV[2]  cost;  ARGV[3] max_burst;  ARGV[4] count per period;  ARGV[5] period µs

local key = KEYS[1]
local op = ARGV[1]
local cost = tonumber(ARGV[2])
local limit = tonumber(ARGV[3]) + 1
local count = tonumber(ARGV[4])
local interval = tonumber(ARGV[5])   -- the period: one emission interval in ticks
local tolerance = interval * limit   -- in ticks
local now = NOW

-- The TAT relative to now, in ticks, never below now.
local tat = 0
local state = redis.call('GET', key)
if state then
  local space = string.find(state, ' ', 1, true)
  local base, off = tonumber(string.sub(state, 1, space - 1)), tonumber(string.sub(state, space + 1))
  local elapsed = now - base
  if elapsed < 0 then
    -- The server's clock went back: count from the later time.
    tat = off
  else
    local passed = elapsed * count
    if passed < off then tat = off - passed end
  end
end

local consume = op == 'check'
local granted = nil
if not consume and op ~= 'peek' then
  -- Leased mode: take what is left (floor((tolerance − tat) / interval)),
  -- up to N, in one go — if that covers the request's cost; otherwise take
  -- nothing and refuse.
  local left = 0
  local room = tolerance - tat
  if room > 0 then
    left = math.floor(room / interval)
    if left * interval > room then left = left - 1 elseif (left + 1) * interval <= room then left = left + 1 end
  end
  granted = math.min(tonumber(string.sub(op, 7)), left)
  if granted >= cost then cost = granted else granted = 0 end
  consume = true
end

-- The decision: allowed, the time to live (ticks), the retry-after (µs).
local allowed, ttl, retry_after, new_tat
if cost > limit then
  -- More than the limit: no wait admits it.
  allowed, ttl, retry_after = false, tat, NEVER
else
  new_tat = tat + interval * cost
  local allow_at = new_tat - tolerance
  if 0 < allow_at then
    -- ceil(allow_at / count)
    local q = math.floor(allow_at / count)
    if q * count > allow_at then q = q - 1 elseif (q + 1) * count <= allow_at then q = q + 1 end
    if q * count < allow_at then q = q + 1 end
    allowed, ttl, retry_after = false, tat, q
  else
    allowed, ttl, retry_after = true, new_tat, 0
  end
end
-- floor((tolerance − ttl) / interval)
local remaining = 0
local next = tolerance - ttl
if next > 0 then
  remaining = math.floor(next / interval)
  if remaining * interval > next then remaining = remaining - 1
  elseif (remaining + 1) * interval <= next then remaining = remaining + 1 end
end
-- ceil(ttl / count)
local reset_after = math.floor(ttl / count)
if reset_after * count > ttl then reset_after = reset_after - 1
elseif (reset_after + 1) * count <= ttl then reset_after = reset_after + 1 end
if reset_after * count < ttl then reset_after = reset_after + 1 end

if consume and allowed and cost > 0 then
  -- The state expires once the TAT is past: whole again. (ceil to ms)
  local ms = math.floor((reset_after + 999) / 1000)
  if ms < 1 then ms = 1 end
  redis.call('SET', key, string.format('%d %d', now, new_tat), 'PX', ms + EXPIRY_SLACK_MS)
end
-- ceil(tolerance / count): the window
local window = math.floor(tolerance / count)
if window * count > tolerance then window = window - 1
elseif (window + 1) * count <= tolerance then window = window + 1 end
if window * count < tolerance then window = window + 1 end
if granted then
  return { allowed and 1 or 0, limit, remaining, retry_after, reset_after, 0, window, granted }
end
return { allowed and 1 or 0, limit, remaining, retry_after, reset_after, 0, window }
