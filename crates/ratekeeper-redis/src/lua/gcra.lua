-- GCRA with redis-cell's CL.THROTTLE reply, as ratekeeper-core's gcra.rs.
--
-- Times are counted in ticks of 1/count microsecond, so the emission
-- interval (period / count) is exact. The theoretical arrival time (TAT) is
-- stored relative to the time of the last write — "base offset", the base
-- in µs and the offset in ticks, one string — so every number the script
-- computes stays below the tolerance (period × limit) and is exact while
-- that is below 2^53.
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
local now = now_micros()

-- The TAT relative to now, in ticks, never below now.
local tat = 0
local state = redis.call('GET', key)
if state then
  local base, off = string.match(state, '^(%S+) (%S+)$')
  base, off = tonumber(base), tonumber(off)
  local elapsed = now - base
  if elapsed < 0 then
    -- The server's clock went back: count from the later time.
    tat = off
  else
    local passed = elapsed * count
    if passed < off then tat = off - passed end
  end
end

-- The decision for `cost`: allowed, the time to live (ticks), the
-- retry-after (µs), the new TAT if allowed, and what remains.
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

local consume = op == 'check'
local granted = nil
if op ~= 'check' and op ~= 'peek' then
  -- Leased mode: take what is left, up to N, in one go — if that covers
  -- the request's cost; otherwise take nothing and refuse.
  local want = tonumber(string.sub(op, 7))
  local _, _, _, _, left = decide(0)
  granted = math.min(want, left)
  if granted >= cost then cost = granted else granted = 0 end
  consume = true
end

local allowed, ttl, retry_after, new_tat, remaining = decide(cost)
if consume and allowed and cost > 0 then
  -- The state expires once the TAT is past: whole again.
  redis.call('SET', key, string.format('%d %d', now, new_tat), 'PX', expire_ms(ceil_div(new_tat, count)) + EXPIRY_SLACK_MS)
end
local reply = { allowed and 1 or 0, limit, remaining, retry_after, ceil_div(ttl, count), 0, ceil_div(tolerance, count) }
if granted then reply[8] = granted end
return reply
