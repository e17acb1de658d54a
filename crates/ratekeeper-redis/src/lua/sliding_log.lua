-- The sliding log on a sorted set, as ratekeeper-core's sliding_log.rs: at
-- most `limit` units in any window (t − window, t]. The design's scheme —
-- ZREMRANGEBYSCORE the expired, ZCARD the rest, ZADD the new, PEXPIRE —
-- with one member per admitted unit, so memory is bounded by the limit
-- (meant for small limits).
--
-- KEYS[1]  the sorted set (member: a sequence number, score: µs admitted)
-- KEYS[2]  its companion hash (fields t = latest time, n = sequence)
-- ARGV[1]  "check" | "peek" | "refund" (drop the newest `cost` units still
--          in the window: a check logs its units as the newest, so a check
--          and a refund at one time cancel out, as the core's `refund`)
-- ARGV[2]  cost
-- ARGV[3]  limit;  ARGV[4] window µs

local log, meta = KEYS[1], KEYS[2]
local consume = ARGV[1] == 'check'
local cost = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local now = NOW

-- A time earlier than the latest seen counts as the latest, so the log
-- stays sorted and time going back never frees a unit.
local t = now
local latest = tonumber(redis.call('HGET', meta, 't') or '')
if latest and latest > t then t = latest end

local horizon = t - window
if ARGV[1] == 'refund' then
  if cost > 0 then
    redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%d', horizon))
    local held = redis.call('ZCARD', log)
    if held > 0 then
      -- The newest have the highest scores (units logged at one time are
      -- alike, so which of them goes does not matter); what slid out is
      -- gone already. The time is kept as a check keeps it.
      local drop = cost
      if drop > held then drop = held end
      -- (ZRANGE and ZREM rather than ZPOPMAX: the commands a deployment
      -- grants stay those of tests/redis/acl-least-privilege.)
      local newest = redis.call('ZRANGE', log, string.format('%d', -drop), '-1')
      redis.call('ZREM', log, unpack(newest))
      redis.call('HSET', meta, 't', string.format('%d', t))
      redis.call('PEXPIRE', meta, expire_ms(window) + EXPIRY_SLACK_MS)
    end
  end
  return 0
end
local total
if consume then
  redis.call('HSET', meta, 't', string.format('%d', t))
  redis.call('PEXPIRE', meta, expire_ms(window) + EXPIRY_SLACK_MS)
  redis.call('ZREMRANGEBYSCORE', log, '-inf', string.format('%d', horizon))
  total = redis.call('ZCARD', log)
else
  total = redis.call('ZCOUNT', log, '(' .. string.format('%d', horizon), '+inf')
end
local function until_out(at) return at + window - t end
local function newest()
  local last = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%d', horizon), '+inf', 'WITHSCORES', 'LIMIT', total - 1, 1)
  return tonumber(last[2])
end

local after = total + cost
if after <= limit then
  local reset_after = 0
  if after > 0 then
    if cost > 0 then reset_after = window else reset_after = until_out(newest()) end
  end
  if consume and cost > 0 then
    local last = redis.call('HINCRBY', meta, 'n', cost)
    local args = {}
    for i = last - cost + 1, last do
      args[#args + 1] = string.format('%d', t)
      args[#args + 1] = string.format('%d', i)
    end
    redis.call('ZADD', log, unpack(args))
    redis.call('PEXPIRE', log, expire_ms(window) + EXPIRY_SLACK_MS)
  end
  return { 1, limit, limit - after, 0, reset_after, 0, window }
end

local retry_after = NEVER
if cost <= limit then
  -- The unit whose expiry leaves room: the (after − limit)-th oldest.
  local excess = after - limit
  local unit = redis.call('ZRANGEBYSCORE', log, '(' .. string.format('%d', horizon), '+inf', 'WITHSCORES', 'LIMIT', excess - 1, 1)
  retry_after = until_out(tonumber(unit[2]))
end
local reset_after = 0
if total > 0 then reset_after = until_out(newest()) end
return { 0, limit, limit - total, retry_after, reset_after, 0, window }
