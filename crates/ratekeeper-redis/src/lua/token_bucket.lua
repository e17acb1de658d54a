-- A token bucket with golang.org/x/time/rate's semantics, as
-- ratekeeper-core's token_bucket.rs: Go's AllowN as a Decision.
--
-- x/time/rate counts time in nanoseconds; every time here is a whole
-- microsecond, so elapsed times are split into seconds and nanoseconds the
-- way Go's Duration.Seconds() splits them, exactly, and token counts are
-- Go's float64 bit for bit.
--
-- KEYS[1]  the state (a string: "tokens last", last in µs)
-- ARGV[1]  "check" | "peek" | "lease:N" (take up to N tokens if that covers
--          the cost, replying with how many after the Decision) | "peek:N"
--          (what "lease:N" would answer, taking nothing) | "refund" (put
--          `cost` tokens back, capped at the burst: the core's `refund`;
--          a bucket here is never in debt, as it takes no reservations)
-- ARGV[2]  cost
-- ARGV[3]  rate (tokens per second; "inf" for no limit);  ARGV[4] burst

local key = KEYS[1]
local consume = ARGV[1] == 'check'
local lease_want = nil
if ARGV[1] ~= 'check' and ARGV[1] ~= 'peek' then lease_want = tonumber(string.match(ARGV[1], ':(%d+)$')) end
local n = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local now = NOW

local INF = 1.7976931348623157e308   -- Go's rate.Inf (math.MaxFloat64)
local INF_DURATION = 9223372036854775807   -- Go's InfDuration (2^63 as a double)

if limit >= INF then
  -- Everything is admitted; nothing to keep.
  return { 1, burst, burst, 0, 0, 0, 0 }
end

-- durationFromTokens, in nanoseconds.
local function duration_from_tokens(tokens)
  if limit <= 0 then return INF_DURATION end
  local d = (tokens / limit) * 1000000000
  if d >= INF_DURATION then return INF_DURATION end
  -- Go's time.Duration(float): truncation toward zero.
  if d >= 0 then return math.floor(d) end
  return math.ceil(d)
end

-- A Go duration reported in whole microseconds, rounded up.
local function report(d)
  if d == INF_DURATION then return NEVER end
  if d <= 0 then return 0 end
  return ceil_div(d, 1000)
end

local tokens, last = burst, now
local state = redis.call('GET', key)
if state then
  local k, l = string.match(state, '^(%S+) (%S+)$')
  tokens, last = tonumber(k), tonumber(l)
end
-- A time earlier than the last one counts as the last (nothing is minted).
local t = now
if t < last then t = last end

-- advance(t): Go's tokensFromDuration(t - last) = Duration.Seconds() × limit.
local elapsed = t - last
local sec = floor_div(elapsed, 1000000)
local nsec = (elapsed - sec * 1000000) * 1000
local available = tokens
if limit > 0 then available = tokens + (sec + nsec / 1e9) * limit end
if available > burst then available = burst end

local window = report(duration_from_tokens(burst))

if ARGV[1] == 'refund' then
  if n > 0 then
    local tokens_after = available + n
    if tokens_after >= burst then
      -- Whole again: the same as no state at all.
      redis.call('DEL', key)
    else
      local reset_after = report(duration_from_tokens(burst - tokens_after))
      local value = string.format('%.17g %d', tokens_after, t)
      if reset_after ~= NEVER then
        redis.call('SET', key, value, 'PX', expire_ms(reset_after) + EXPIRY_SLACK_MS)
      else
        redis.call('SET', key, value)
      end
    end
  end
  return 0
end

-- reserveN(t, n, 0) as a Decision: allowed, the tokens left, and the
-- remaining, retry-after and reset-after.
local function decide(n)
  local left = available - n
  local wait = 0
  if left < 0 then wait = duration_from_tokens(-left) end
  local allowed = n <= burst and wait <= 0
  local after = available
  if allowed then after = left end
  local remaining = 0
  if after == after and after >= 1 then remaining = math.floor(after) end
  local reset_after = 0
  if after < burst then reset_after = report(duration_from_tokens(burst - after)) end
  local retry_after = 0
  if not allowed then
    if n > burst then retry_after = NEVER else retry_after = report(duration_from_tokens(n - after)) end
  end
  return allowed, after, remaining, retry_after, reset_after
end

local granted = nil
if lease_want then
  -- Leased mode: take the whole tokens there are, up to `lease_want`, in
  -- one go — if that covers the request's `n`; otherwise take nothing and
  -- refuse.
  local whole = 0
  if available == available and available >= 1 then whole = math.floor(available) end
  granted = math.min(lease_want, whole)
  if granted >= n then n = granted else granted = 0 end
  -- "peek:N" takes nothing.
  consume = string.sub(ARGV[1], 1, 6) == 'lease:'
end

local allowed, after, remaining, retry_after, reset_after = decide(n)
if consume and allowed then
  if after >= burst then
    -- Whole again: the same as no state at all.
    redis.call('DEL', key)
  else
    -- Tokens are a double: %.17g reads back bit for bit.
    local value = string.format('%.17g %d', after, t)
    if reset_after ~= NEVER then
      redis.call('SET', key, value, 'PX', expire_ms(reset_after) + EXPIRY_SLACK_MS)
    else
      redis.call('SET', key, value)
    end
  end
end
local reply = { allowed and 1 or 0, burst, remaining, retry_after, reset_after, 0, window }
if granted then reply[8] = granted end
return reply
