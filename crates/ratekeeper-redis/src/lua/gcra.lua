-- GCRA with redis-cell's CL.THROTTLE reply, as ratekeeper-core's gcra.rs.
--
-- Times are counted in ticks of 1/count microsecond, so the emission
-- interval (period / count) is exact. The theoretical arrival time (TAT) is
-- stored relative to the time of the last write — base (µs) and off
-- (ticks) — so every number the script computes stays below the tolerance
-- (period × limit) and is exact while that is below 2^53.
--
-- KEYS[1]  the state hash (fields b = base µs, o = offset ticks)
-- ARGV[1]  "check" | "peek" | "lease:N" (take up to N units if that covers
--          the cost, replying with how many after the Decision);  ARGV[2] cost
-- ARGV[3]  max_burst;  ARGV[4] count per period;  ARGV[5] period µs

local key = KEYS[1]
local consume = ARGV[1] == 'check'
local lease_want = tonumber(string.match(ARGV[1], '^lease:(%d+)$'))
local cost = tonumber(ARGV[2])
local max_burst = tonumber(ARGV[3])
local count = tonumber(ARGV[4])
local period = tonumber(ARGV[5])
local now = now_micros()

local limit = max_burst + 1
local interval = period            -- in ticks
local tolerance = period * limit   -- in ticks

-- The TAT relative to now, in ticks, never below now.
local tat = 0
local state = redis.call('HMGET', key, 'b', 'o')
if state[1] then
  local base, off = tonumber(state[1]), tonumber(state[2])
  local elapsed = now - base
  if elapsed < 0 then
    -- The server's clock went back: count from the later time.
    tat = off
  else
    local passed = elapsed * count
    if passed < off then tat = off - passed end
  end
end

local window = ceil_div(tolerance, count)

-- The decision for `cost` at the current state: allowed, the time to live
-- (ticks), the retry-after (µs), the new TAT if allowed, and what remains.
local function decide(cost)
  local allowed, ttl, retry_after, new_tat
  if cost > limit then
    -- More than the limit: no wait admits it.
    allowed, ttl, retry_after = false, tat, NEVER
  else
    new_tat = tat + interval * cost
    local allow_at = new_tat - tolerance
    if 0 < allow_at then
      allowed, ttl, retry_after = false, tat, ceil_div(allow_at, count)
    else
      allowed, ttl, retry_after = true, new_tat, 0
    end
  end
  local next = tolerance - ttl
  local remaining = 0
  if next > 0 then remaining = floor_div(next, interval) end
  return allowed, ttl, retry_after, new_tat, remaining
end

local granted = nil
if lease_want then
  -- Leased mode: take what is left, up to `lease_want`, in one go — if
  -- that covers the request's `cost`; otherwise take nothing and refuse.
  local _, _, _, _, left = decide(0)
  granted = math.min(lease_want, left)
  if granted >= cost then cost = granted else granted = 0 end
  consume = true
end

local allowed, ttl, retry_after, new_tat, remaining = decide(cost)
if consume and allowed and cost > 0 then
  redis.call('HSET', key, 'b', num(now), 'o', num(new_tat))
  -- Once the TAT is past, the state is whole again: let it go.
  set_expiry(key, expire_ms(ceil_div(new_tat, count)))
end
local reply = decision(allowed, limit, remaining, retry_after, ceil_div(ttl, count), 0, window)
if granted then reply[#reply + 1] = num(granted) end
return reply
