-- The sliding window counter, as ratekeeper-core's sliding_window_counter.rs:
-- the previous window's count weighted by how much of it still overlaps
-- the sliding window, plus the current window's, compared in exact
-- integers (exact while limit × window stays below 2^53).
--
-- KEYS[1]  the state (a string: "window-index previous current")
-- ARGV[1]  "check" | "peek" | "refund" (count `cost` fewer units in now's
--          window, saturating at 0; the previous window is history the
--          estimate weighs, never given back: the core's `refund`)
-- ARGV[2]  cost
-- ARGV[3]  limit;  ARGV[4] window µs

local key = KEYS[1]
local consume = ARGV[1] == 'check'
local cost = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local w = tonumber(ARGV[4])
local now = NOW

local index = math.floor(now / w)
if index * w > now then index = index - 1 elseif (index + 1) * w <= now then index = index + 1 end
local stored, previous, current = index, 0, 0
local state = redis.call('GET', key)
if state then
  local i, p, c = string.match(state, '^(%S+) (%S+) (%S+)$')
  stored, p, c = tonumber(i), tonumber(p), tonumber(c)
  if stored > index then index = stored end
  if index == stored then previous, current = p, c
  elseif index == stored + 1 then previous, current = c, 0 end
end
local elapsed = now - index * w
if elapsed < 0 then elapsed = 0 end

if ARGV[1] == 'refund' then
  if current > 0 and cost > 0 then
    local left = current - cost
    if left < 0 then left = 0 end
    redis.call('SET', key, string.format('%d %d %d', index, previous, left), 'PX', expire_ms(2 * w - elapsed) + EXPIRY_SLACK_MS)
  end
  return 0
end

local weighted_previous = previous * (w - elapsed)
local capacity = limit * w
local function used(c) return weighted_previous + c * w end
local function remaining(c)
  local room = capacity - used(c)
  if room <= 0 then return 0 end
  return floor_div(room, w)
end
local function reset_after(c)
  if c > 0 then return 2 * w - elapsed end
  if previous > 0 then return w - elapsed end
  return 0
end

local after = current + cost
if used(after) <= capacity then
  if consume and cost > 0 then
    redis.call('SET', key, string.format('%d %d %d', index, previous, after), 'PX', expire_ms(2 * w - elapsed) + EXPIRY_SLACK_MS)
  end
  return { 1, limit, remaining(after), 0, reset_after(after), 0, w }
end

local retry_after
if cost > limit then
  retry_after = NEVER
else
  -- The earliest offset into a window at which `p` weighted units leave
  -- room for `room` more (0 when p is 0).
  local function earliest(p, room)
    if p == 0 then return 0 end
    local e = w - floor_div(room * w, p)
    if e < 0 then e = 0 end
    return e
  end
  local room = limit - current - cost
  if room >= 0 and earliest(previous, room) < w then
    retry_after = earliest(previous, room) - elapsed
  else
    retry_after = (w - elapsed) + earliest(current, limit - cost)
  end
end
return { 0, limit, remaining(current), retry_after, reset_after(current), 0, w }
