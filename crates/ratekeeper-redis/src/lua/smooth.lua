-- Guava's SmoothBursty / SmoothWarmingUp, shared through one Redis hash.
--
-- The same operations, in the same order, as ratekeeper-core's
-- `smooth.rs` (which is Guava 31.1's SmoothRateLimiter bit for bit), so that
-- many processes sharing this key get the waits one Guava limiter would
-- give. Time is the server's (`now_micros()`, prepended by the client), in
-- microseconds since the limiter was created.
--
-- KEYS[1]  the limiter's hash
-- ARGV[1]  operation: "init" | "reserve" | "try" | "set_rate" | "get" | "query"
--          | "inspect"
-- ARGV[2]  kind: "bursty" | "warming"   (used only when the hash is created)
-- ARGV[3]  permits per second           (idem)
-- ARGV[4]  max burst seconds | warm-up micros (idem)
-- ARGV[5]  cold factor                  (idem; warming only)
-- ARGV[6]  idle TTL in milliseconds, 0 = never expire
-- ARGV[7], ARGV[8]  the operation's arguments
--
-- Replies (numbers as exact strings):
--   init                     -> {}   (creates the state if it does not exist)
--   reserve PERMITS          -> { wait }
--   try PERMITS TIMEOUT      -> { wait } or { -1 } when refused
--   set_rate RATE            -> { rate }
--   get                      -> { rate, stored, max, interval, next_free, now }
--   query TIMEOUT            -> { time_until_available, can_acquire (0/1) }
--   inspect                  -> { rate, stored permits, max permits,
--                                 time_until_available } as of now, writing
--                                 nothing (a missing hash is read as the new
--                                 limiter the next operation would create)

local key = KEYS[1]
local op = ARGV[1]
local now_abs = NOW

local F = redis.call('HMGET', key, 'c', 's', 'm', 'i', 'n', 'k', 'b', 'w', 'f', 'l', 't')
local st = {}
local created
if F[1] then
  created = tonumber(F[1])
  st.stored = tonumber(F[2]); st.max = tonumber(F[3]); st.interval = tonumber(F[4])
  st.next_free = tonumber(F[5]); st.kind = F[6]; st.burst = tonumber(F[7])
  st.warmup = tonumber(F[8]); st.cold = tonumber(F[9]); st.slope = tonumber(F[10])
  st.threshold = tonumber(F[11])
end
local now
if created then now = now_abs - created end

-- coolDownIntervalMicros
local function cool_down()
  if st.kind == 'bursty' then return st.interval end
  return st.warmup / st.max
end

-- resync
local function resync(t)
  if t > st.next_free then
    local new_permits = lsub(t, st.next_free) / cool_down()
    st.stored = jmin(st.max, st.stored + new_permits)
    st.next_free = t
  end
end

-- doSetRate(double, double) of each subclass
local function shape_set_rate(rate, interval)
  local old_max = st.max
  if st.kind == 'bursty' then
    st.max = st.burst * rate
    if old_max == math.huge then
      st.stored = st.max
    elseif old_max == 0 then
      st.stored = 0
    else
      st.stored = st.stored * st.max / old_max
    end
  else
    local cold_interval = interval * st.cold
    st.threshold = 0.5 * st.warmup / interval
    st.max = st.threshold + 2.0 * st.warmup / (interval + cold_interval)
    st.slope = (cold_interval - interval) / (st.max - st.threshold)
    if old_max == math.huge then
      st.stored = 0
    elseif old_max == 0 then
      st.stored = st.max
    else
      st.stored = st.stored * st.max / old_max
    end
  end
end

-- setRate (the rate was checked by the client)
local function set_rate(rate, t)
  resync(t)
  local interval = 1000000.0 / rate
  st.interval = interval
  shape_set_rate(rate, interval)
end

-- storedPermitsToWaitTime
local function stored_to_wait(stored, to_take)
  if st.kind == 'bursty' then return 0 end
  local above = stored - st.threshold
  local micros = 0
  if above > 0 then
    local take_above = jmin(above, to_take)
    local length = (st.interval + above * st.slope) + (st.interval + (above - take_above) * st.slope)
    micros = d2l(take_above * length / 2.0)
    to_take = to_take - take_above
  end
  return ladd(micros, d2l(st.interval * to_take))
end

-- reserveAndGetWaitLength
local function reserve(permits, t)
  resync(t)
  local moment = st.next_free
  local to_spend = jmin(permits, st.stored)
  local fresh = permits - to_spend
  local wait = ladd(stored_to_wait(st.stored, to_spend), d2l(fresh * st.interval))
  st.next_free = saturated_add(st.next_free, wait)
  st.stored = st.stored - to_spend
  local w = lsub(moment, t)
  if w < 0 then w = 0 end
  return w
end

-- canAcquire
local function can_acquire(timeout, t)
  if timeout < 0 then timeout = 0 end
  return lsub(st.next_free, timeout) <= t
end

local function save()
  redis.call('HSET', key, 'c', num(created), 's', num(st.stored), 'm', num(st.max), 'i', num(st.interval),
    'n', num(st.next_free), 'k', st.kind, 'b', num(st.burst), 'w', num(st.warmup), 'f', num(st.cold),
    'l', num(st.slope), 't', num(st.threshold))
  local ttl = tonumber(ARGV[6])
  if ttl > 0 then redis.call('PEXPIRE', key, ttl + EXPIRY_SLACK_MS) end
end

if not created then
  -- Guava's factories: every field zero, then setRate at time 0.
  created = now_abs
  now = 0
  st = { stored = 0, max = 0, interval = 0, next_free = 0, kind = ARGV[2], burst = 0, warmup = 0,
         cold = 0, slope = 0, threshold = 0 }
  if st.kind == 'bursty' then
    st.burst = tonumber(ARGV[4])
  else
    st.warmup = tonumber(ARGV[4])
    st.cold = tonumber(ARGV[5])
  end
  set_rate(tonumber(ARGV[3]), 0)
  if op ~= 'inspect' then save() end
end

if op == 'init' then
  return {}
elseif op == 'reserve' then
  local w = reserve(tonumber(ARGV[7]), now)
  save()
  return { num(w) }
elseif op == 'try' then
  if not can_acquire(tonumber(ARGV[8]), now) then
    return { '-1' }
  end
  local w = reserve(tonumber(ARGV[7]), now)
  save()
  return { num(w) }
elseif op == 'set_rate' then
  set_rate(tonumber(ARGV[7]), now)
  save()
  return { num(1000000.0 / st.interval) }
elseif op == 'get' then
  return { num(1000000.0 / st.interval), num(st.stored), num(st.max), num(st.interval), num(st.next_free), num(now) }
elseif op == 'inspect' then
  -- resync on this copy of the state, which is never saved.
  resync(now)
  local w = lsub(st.next_free, now)
  if w < 0 then w = 0 end
  return { num(1000000.0 / st.interval), num(st.stored), num(st.max), num(w) }
elseif op == 'query' then
  local w = lsub(st.next_free, now)
  if w < 0 then w = 0 end
  local ok = 0
  if can_acquire(tonumber(ARGV[7]), now) then ok = 1 end
  return { num(w), ok }
end
return redis.error_reply('ratekeeper: unknown operation ' .. tostring(op))
