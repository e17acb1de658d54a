-- The fixed window counter, as ratekeeper-core's fixed_window.rs: `limit`
-- units per window aligned on the server's clock (multiples of the window
-- since the Unix epoch). Worst case: 2 × limit across a window edge.
--
-- KEYS[1]  the state (a string: "window-index units-counted")
-- ARGV[1]  "check" | "peek" | "refund" (count `cost` fewer units in now's
--          window, saturating at 0: the core's `refund`);  ARGV[2] cost
-- ARGV[3]  limit;  ARGV[4] window µs

local key = KEYS[1]
local consume = ARGV[1] == 'check'
local cost = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
local window = tonumber(ARGV[4])
local now = NOW

local index = math.floor(now / window)
if index * window > now then index = index - 1 elseif (index + 1) * window <= now then index = index + 1 end
local count = 0
local state = redis.call('GET', key)
if state then
  local i, c = string.match(state, '^(%S+) (%S+)$')
  local stored = tonumber(i)
  -- A window never reopens, even if the server's clock goes back.
  if stored >= index then index, count = stored, tonumber(c) end
end

local start = index * window
local t = now
if t < start then t = start end
local to_end = start + window - t
if ARGV[1] == 'refund' then
  -- Only now's window gives back: an earlier one's units are gone already.
  -- The state stays (with the window's index) even at 0, as the core's.
  if count > 0 and cost > 0 then
    local left = count - cost
    if left < 0 then left = 0 end
    redis.call('SET', key, string.format('%d %d', index, left), 'PX', expire_ms(to_end) + EXPIRY_SLACK_MS)
  end
  return 0
end
local function reset_after(counted)
  if counted == 0 then return 0 end
  return to_end
end

local after = count + cost
if after <= limit then
  if consume and cost > 0 then
    redis.call('SET', key, string.format('%d %d', index, after), 'PX', expire_ms(to_end) + EXPIRY_SLACK_MS)
  end
  return { 1, limit, limit - after, 0, reset_after(after), 0, window }
end
local retry_after = to_end
if cost > limit then retry_after = NEVER end
local remaining = limit - count
if remaining < 0 then remaining = 0 end
return { 0, limit, remaining, retry_after, reset_after(count), 0, window }
