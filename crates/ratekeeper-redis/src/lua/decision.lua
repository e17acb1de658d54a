-- What every admission script shares: exact integer division on doubles,
-- and the Decision reply.
--
-- Integers here are doubles, exact below 2^53; a quotient computed with /
-- can round up across an integer, so the floor and ceiling are corrected
-- with one multiplication, exact while the operands stay below 2^53.
--
-- Replies are arrays of integers (Redis turns Lua numbers into integer
-- replies, without formatting them as text): a Decision's seven fields,
-- allowed (1 or 0), limit, remaining, retry-after, reset-after, wait and
-- window, with NEVER (-1) for "never"; a lease appends what it granted.

local NEVER = -1

-- floor(a / b) for integers a >= 0, b > 0.
local function floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then q = q - 1 elseif (q + 1) * b <= a then q = q + 1 end
  return q
end

-- ceil(a / b) for integers a >= 0, b > 0.
local function ceil_div(a, b)
  local q = floor_div(a, b)
  if q * b < a then q = q + 1 end
  return q
end

-- Milliseconds for an expiry from microseconds, rounded up (at least 1).
local function expire_ms(micros)
  local ms = ceil_div(micros, 1000)
  if ms < 1 then ms = 1 end
  return ms
end
