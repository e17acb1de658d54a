-- Forgets a limiter's state: deletes every key it keeps (KEYS, all under
-- one hash tag, so one Redis Cluster slot), atomically.
--
-- Reply: how many of them existed.

return redis.call('DEL', unpack(KEYS))
