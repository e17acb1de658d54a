-- Heartbeats of the nodes sharing a limit (divided mode, docs/redis.md): each
-- node keeps itself in a sorted set, scored by when its heartbeat runs out;
-- the live nodes are those whose heartbeat has not.
--
-- KEYS[1]  the sorted set of nodes
-- ARGV[1]  "beat" | "leave";  ARGV[2] node id;  ARGV[3] heartbeat TTL in µs
-- Reply: the number of live nodes (this one included after a beat).

local key = KEYS[1]
local now = NOW
local ttl = tonumber(ARGV[3])
if ARGV[1] == 'leave' then
  redis.call('ZREM', key, ARGV[2])
else
  redis.call('ZADD', key, string.format('%d', now + ttl), ARGV[2])
end
redis.call('ZREMRANGEBYSCORE', key, '-inf', string.format('%d', now))
redis.call('PEXPIRE', key, expire_ms(2 * ttl) + EXPIRY_SLACK_MS)
return redis.call('ZCARD', key)
