-- Java's arithmetic on Lua's numbers (IEEE doubles), for scripts that must
-- give Guava's answers. Lua's + - * / on doubles are Java's double
-- operations; what differs is `long`: Lua has none, so longs are doubles
-- here, exact up to 2^53 and rounded beyond (see the crate docs for which
-- results that can change).

local LONG_MAX = 9223372036854775807   -- as a double: 2^63
local LONG_MIN = -9223372036854775808  -- -2^63, exact
local TWO_64 = 18446744073709551616

-- Java's (long) cast of a double: truncation toward zero, saturating, NaN to 0.
local function d2l(x)
  if x ~= x then return 0 end
  if x >= LONG_MAX then return LONG_MAX end
  if x <= LONG_MIN then return LONG_MIN end
  if x >= 0 then return math.floor(x) end
  return math.ceil(x)
end

-- Java's long + and -, which wrap around on overflow. 2^63 itself stands
-- for Long.MAX_VALUE (which a double cannot hold), so only sums beyond it
-- wrap.
local function wrap(x)
  if x > LONG_MAX then return x - TWO_64 end
  if x < LONG_MIN then return x + TWO_64 end
  return x
end
local function ladd(a, b) return wrap(a + b) end
local function lsub(a, b) return wrap(a - b) end

-- Guava's LongMath.saturatedAdd.
local function saturated_add(a, b)
  local s = a + b
  if s >= LONG_MAX then return LONG_MAX end
  if s <= LONG_MIN then return LONG_MIN end
  return s
end

-- Java's Math.min(double, double): NaN wins, and -0.0 is below 0.0.
local function jmin(a, b)
  if a ~= a then return a end
  if a == 0 and b == 0 and 1 / b < 0 then return b end
  if a <= b then return a end
  return b
end

-- A double as a string that reads back bit for bit.
local function num(x)
  return string.format('%.17g', x)
end
