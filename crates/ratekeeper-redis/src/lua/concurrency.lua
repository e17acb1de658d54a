-- A concurrency limit shared by many processes: permits held as leases,
-- each with an expiry on the server's clock, so that a holder that dies
-- (kill -9, a lost host) gives its permits back when its lease runs out,
-- with no process alive to do it.
--
-- KEYS[1]  sorted set: lease id -> expiry (server time, µs)
-- KEYS[2]  hash: lease id -> its permits, and 'held' -> their sum
--          (both under the limiter's hash tag: one Redis Cluster slot)
-- ARGV[1]  "acquire" | "release" | "renew" | "held" | "peek"
-- ARGV[2]  the limit (permits held at once, at most)
-- ARGV[3]  the lease TTL in µs
-- ARGV[4]  the lease id (hex digits: never the field 'held')
-- ARGV[5]  the permits to acquire (0 for the other operations)
--
-- Replies (integers; NEVER is -1):
--   acquire -> { 1, held, 0, reset_after } admitted,
--              { 0, held, retry_after, reset_after } refused
--   release -> { 1 } released now, { 0 } unknown: released before, or
--              expired (and so reclaimed) first
--   renew   -> { 1 } its expiry is now + TTL, { 0 } unknown (as release)
--   held    -> { held, leases }
--   peek    -> what acquire would answer for ARGV[5] permits, taking
--              nothing and writing nothing (expired leases are counted out,
--              not reclaimed)
-- `held` is counted after the operation. Every operation first reclaims the
-- leases whose expiry has come (expiry <= now), so a release or a renewal
-- that arrives after its lease's expiry fails even if nothing reclaimed it
-- before.
--
-- Counts are doubles: exact while the limit stays below 2^53 permits.

local leases, counts = KEYS[1], KEYS[2]
local op = ARGV[1]
local limit = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local id = ARGV[4]
local now = NOW
local HELD = 'held'
-- Leases reclaimed or walked per command: a bounded argument list.
local CHUNK = 256

local function int(x)
  return string.format('%d', x)
end

local function held()
  return tonumber(redis.call('HGET', counts, HELD) or '0')
end

-- Removes every lease whose expiry has come, giving its permits back.
local function reclaim()
  while true do
    local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', int(now), 'LIMIT', 0, CHUNK)
    if #expired == 0 then return end
    local permits = redis.call('HMGET', counts, unpack(expired))
    local freed = 0
    for i = 1, #permits do freed = freed + (tonumber(permits[i]) or 0) end
    redis.call('ZREM', leases, unpack(expired))
    redis.call('HDEL', counts, unpack(expired))
    redis.call('HINCRBY', counts, HELD, int(-freed))
    if #expired < CHUNK then return end
  end
end

-- µs until the last lease expires (0 when none is held): when the limit is
-- whole again if nothing is acquired or renewed meanwhile.
local function reset_after()
  local last = redis.call('ZRANGE', leases, -1, -1, 'WITHSCORES')
  if #last == 0 then return 0 end
  local left = tonumber(last[2]) - now
  if left < 0 then return 0 end
  return left
end

-- The keys live until the last lease expires (then nothing they hold
-- matters); none is left once no lease is.
local function keep_until_last_expiry()
  local left = reset_after()
  if left <= 0 then
    redis.call('DEL', leases, counts)
  else
    local ms = expire_ms(left) + EXPIRY_SLACK_MS
    redis.call('PEXPIRE', leases, ms)
    redis.call('PEXPIRE', counts, ms)
  end
end

-- µs until enough leases have expired for `permits` more to fit, if none is
-- released or renewed meanwhile (the soonest first; leases already expired
-- count for nothing, so a peek, which reclaims none, walks the same ones).
local function retry_after(now_held, permits)
  local need = now_held + permits - limit
  local freed, start = 0, 0
  while true do
    local page = redis.call('ZRANGEBYSCORE', leases, '(' .. int(now), '+inf', 'WITHSCORES', 'LIMIT', start, CHUNK)
    if #page == 0 then return NEVER end
    local ids = {}
    for i = 1, #page, 2 do ids[#ids + 1] = page[i] end
    local permits_of = redis.call('HMGET', counts, unpack(ids))
    for j = 1, #ids do
      freed = freed + (tonumber(permits_of[j]) or 0)
      if freed >= need then return tonumber(page[2 * j]) - now end
    end
    start = start + CHUNK
  end
end

if id == HELD then
  return redis.error_reply('ERR ratekeeper: not a lease id')
end

-- The permits the leases whose expiry has come hold (what reclaim frees),
-- read only.
local function expired_permits()
  local freed, start = 0, 0
  while true do
    local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', int(now), 'LIMIT', start, CHUNK)
    if #expired == 0 then return freed end
    local permits = redis.call('HMGET', counts, unpack(expired))
    for i = 1, #permits do freed = freed + (tonumber(permits[i]) or 0) end
    if #expired < CHUNK then return freed end
    start = start + CHUNK
  end
end

if op == 'peek' then
  -- acquire's answer, from the state reclaim would leave, writing nothing.
  local permits = tonumber(ARGV[5])
  local now_held = held() - expired_permits()
  if permits > limit then
    return { 0, now_held, NEVER, reset_after() }
  end
  if now_held + permits > limit then
    return { 0, now_held, retry_after(now_held, permits), reset_after() }
  end
  local last = reset_after()
  if last < ttl then last = ttl end
  return { 1, now_held + permits, 0, last }
end

reclaim()

if op == 'acquire' then
  local permits = tonumber(ARGV[5])
  local now_held = held()
  if permits > limit then
    return { 0, now_held, NEVER, reset_after() }
  end
  if now_held + permits > limit then
    return { 0, now_held, retry_after(now_held, permits), reset_after() }
  end
  if redis.call('ZSCORE', leases, id) then
    return redis.error_reply('ERR ratekeeper: lease id in use')
  end
  redis.call('ZADD', leases, int(now + ttl), id)
  redis.call('HSET', counts, id, int(permits))
  now_held = redis.call('HINCRBY', counts, HELD, int(permits))
  keep_until_last_expiry()
  return { 1, now_held, 0, reset_after() }
elseif op == 'release' then
  local permits = redis.call('HGET', counts, id)
  if not permits then
    keep_until_last_expiry()
    return { 0 }
  end
  redis.call('ZREM', leases, id)
  redis.call('HDEL', counts, id)
  redis.call('HINCRBY', counts, HELD, int(-tonumber(permits)))
  keep_until_last_expiry()
  return { 1 }
elseif op == 'renew' then
  if not redis.call('ZSCORE', leases, id) then
    keep_until_last_expiry()
    return { 0 }
  end
  redis.call('ZADD', leases, 'XX', int(now + ttl), id)
  keep_until_last_expiry()
  return { 1 }
elseif op == 'held' then
  keep_until_last_expiry()
  return { held(), redis.call('ZCARD', leases) }
end
return redis.error_reply('ERR ratekeeper: unknown operation ' .. tostring(op))
