-- GCRA, as ratekeeper-core's gcra.rs: this script keeps the theoretical
-- arrival time (TAT) and admits or refuses; the client turns its reply into
-- redis-cell's CL.THROTTLE fields with the core's own arithmetic.
--
-- Times are counted in ticks of 1/count microsecond, so the emission
-- interval (period / count) is exact. The TAT is stored relative to the
-- time of the last write: the server's time then, in microseconds, and the
-- TAT's offset from it in ticks. So every number the script computes stays
-- below the tolerance (period × limit), or is a time in microseconds, and
-- is exact while that is below 2^53.
--
-- The state is those two numbers and the key's expiry (microseconds, on
-- the same clock as NOW) as three little-endian doubles (24 bytes,
-- `struct.pack('<ddd', …)`): exact for these integers, and one C call to
-- read or write. As text ("seconds microseconds offset") a key that still
-- owed time cost 5.1 µs of server time per single-key run instead of 4.35,
-- most of it finding and converting the parts (redis-benchmark, EVALSHA's
-- usec_per_call). The 16 bytes of the version before (time and offset,
-- no expiry) are read too; a value of any other length is not this
-- script's: an error, never a guess.
--
-- Needs Redis 6.0 or later (`SET … KEEPTTL`).
--
-- The key expires once its state is whole again, or later: a write that
-- moves the expiry sets it to twice the TAT's lead, and at least a second
-- (as go-redis/redis_rate keeps its keys), and the writes after it keep it
-- (`KEEPTTL`) for as long as it covers their own lead. Setting an expiry
-- is most of a write's cost, and creating the key again once it expired
-- more: on keys visited again and again (1,000 keys at 200 decisions/s
-- each) keeping both took a run from 4.44 µs of server time to 3.55. The
-- state stays exact either way: a key kept past its TAT decides as an
-- absent one. What it costs is memory: a key lives longer than its state
-- needs by at most the larger of a second and its lead.
--
-- Kept to what needs the server: one GET, at most one SET, and a reply of
-- one integer. Every field of the decision (remaining, retry-after,
-- reset-after: divisions and roundings) follows from the cost and how far
-- the TAT lay ahead of now, so the client computes them (`Gcra::
-- decide_ahead`) instead of a second copy of that arithmetic in Lua.
-- Measured with redis-benchmark, this halved the script's own work.
--
-- The expiry handed to redis.call is a string: Redis 7.0 turns a Lua
-- number into text with printf's "%.17g", slower than Lua's own "%d".
--
-- One run may decide for several keys (or the same key several times), in
-- order, at one server time: a client with many checks in flight sends
-- them as one script (see `RedisLimiter::check_many_async`), and the
-- script's fixed costs (the call, TIME, the reply) are paid once.
--
-- KEYS     the states, one per request (24 bytes: the time written, the
--          offset, the expiry)
-- ARGV[1]  "check" | "peek" | "lease:N" (one key only: take up to N units
--          if that covers the cost) | "peek:N" (what "lease:N" would
--          answer, taking nothing: leased mode's peek) | "refund" (the
--          TAT moved back by cost × the emission interval, never before
--          now, as the core's `refund`: nothing when the key is idle)
-- ARGV[2] max_burst;  ARGV[3] count per period;  ARGV[4] period µs;
-- ARGV[4 + i] the cost of request i
--
-- Reply: for each request, the TAT's lead over now in ticks (0 when not
-- ahead) before its decision — one integer when there is one request, and
-- for "lease:N" (and "peek:N") { lead, units taken }. "peek" and "peek:N"
-- never write.

local op = ARGV[1]
-- Only "check" and "lease:N" write.
local takes = op == 'check' or string.sub(op, 1, 6) == 'lease:'
local count = ARGV[3] + 0
local interval = ARGV[4] + 0                -- the period: one emission interval in ticks
local tolerance = interval * (ARGV[2] + 1)  -- in ticks
local n = #KEYS
local TICKS_PER_MS = count * 1000
local leads = nil
if n > 1 then leads = {} end

for i = 1, n do
  local key = KEYS[i]
  local cost = ARGV[4 + i] + 0
  local lead = 0
  local expires = 0  -- the key's expiry (µs), when it holds a state
  local state = redis.call('GET', key)
  if state then
    local written, offset
    if #state == 24 then
      written, offset, expires = struct.unpack('<ddd', state)
    elseif #state == 16 then
      -- An earlier version's state, with no expiry in it: its key expires
      -- when its state is whole, so it is read as expiring now (the write
      -- below sets one), and clients of both versions can share keys
      -- during a rolling upgrade.
      written, offset = struct.unpack('<dd', state)
    else
      return redis.error_reply('ratekeeper: ' .. key .. ' does not hold a GCRA state')
    end
    local elapsed = NOW - written
    if elapsed < 0 then
      -- The server's clock went back: count from the later time.
      lead = offset
    else
      local passed = elapsed * count
      if passed < offset then lead = offset - passed end
    end
  end

  if op == 'refund' then
    if lead > 0 and cost > 0 then
      local new_lead = lead - interval * cost
      if new_lead <= 0 then
        -- The TAT back at now: whole again, the same as no state.
        redis.call('DEL', key)
      elseif expires >= NOW + new_lead / count + EXPIRY_SLACK_MS * 1000 then
        redis.call('SET', key, struct.pack('<ddd', NOW, new_lead, expires), 'KEEPTTL')
      else
        -- (An earlier version's state, which holds no expiry.)
        local ttl = math.max(math.floor(2 * new_lead / TICKS_PER_MS), 1000) + 1 + EXPIRY_SLACK_MS  -- ms
        redis.call('SET', key, struct.pack('<ddd', NOW, new_lead, NOW + ttl * 1000), 'PX', string.format('%d', ttl))
      end
    end
  elseif op ~= 'peek' then
    local granted = nil
    if op ~= 'check' then
      -- Leased mode: take what is left (floor((tolerance − lead) / interval)),
      -- up to N, in one go — if that covers the request's cost; otherwise
      -- take nothing and refuse.
      local left = 0
      local room = tolerance - lead
      if room > 0 then
        left = math.floor(room / interval)
        if left * interval > room then left = left - 1 elseif (left + 1) * interval <= room then left = left + 1 end
      end
      granted = math.min(string.match(op, ':(%d+)$') + 0, left)
      if granted >= cost then cost = granted else granted = 0 end
    end
    -- Admitted when the pushed TAT is at most the tolerance ahead of now (a
    -- cost above the limit never is); a cost of 0 is a look, storing nothing.
    if takes and cost > 0 then
      local new_lead = lead + interval * cost
      if new_lead <= tolerance then
        -- The state must live until the TAT is past (whole again); the
        -- expiry it has may already cover that (see the header).
        if expires >= NOW + new_lead / count + EXPIRY_SLACK_MS * 1000 then
          redis.call('SET', key, struct.pack('<ddd', NOW, new_lead, expires), 'KEEPTTL')
        else
          local ttl = math.max(math.floor(2 * new_lead / TICKS_PER_MS), 1000) + 1 + EXPIRY_SLACK_MS  -- ms
          redis.call('SET', key, struct.pack('<ddd', NOW, new_lead, NOW + ttl * 1000),
            'PX', string.format('%d', ttl))
        end
      end
    end
    if granted then return { lead, granted } end
  end
  if n == 1 then return lead end
  leads[i] = lead
end
return leads
