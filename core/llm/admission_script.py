"""The Lua side of the chat model's admission queue (core/llm/admission.py): every change of the queue is
one atomic script on Redis, so API processes and workers share it without races.

Keys (KEYS[1..9]): waiting tickets per priority (zsets scored by start-time fair queueing, ties broken
by the ticket id, a zero-padded arrival number), the waiting tickets' deadlines, the holders and their
lease deadlines, when each holder was granted, the virtual time per priority, each user's last score per
priority, and counters (ticket numbers, a moving average of how long a slot is held, and the published
slot count that overrides each caller's own). Time is Redis's
own clock (TIME), so processes on different hosts agree on lease deadlines."""

_PRELUDE = """
if redis.replicate_commands then redis.replicate_commands() end
local WAIT = {interactive = KEYS[1], background = KEYS[2]}
local WAIT_DL, HOLDERS, GRANTED_AT, VTIME = KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local LAST = {interactive = KEYS[7], background = KEYS[8]}
local STATS = KEYS[9]

-- The slot count every caller uses: the endpoint's published one (its server's own, or the pool's
-- definition: core/llm/pool.py), else the caller's; so callers with different settings agree.
local function slots(given)
  local shared = tonumber(redis.call('HGET', STATS, 'slots') or '0')
  if shared > 0 then return shared end
  return given
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Holders whose lease lapsed (their process died) and waiters that stopped polling leave the queue.
local function expire(now)
  for _, t in ipairs(redis.call('ZRANGEBYSCORE', HOLDERS, '-inf', now)) do
    redis.call('ZREM', HOLDERS, t)
    redis.call('HDEL', GRANTED_AT, t)
  end
  for _, t in ipairs(redis.call('ZRANGEBYSCORE', WAIT_DL, '-inf', now)) do
    redis.call('ZREM', WAIT_DL, t)
    redis.call('ZREM', WAIT.interactive, t)
    redis.call('ZREM', WAIT.background, t)
  end
end

-- Free slots go to the lowest score, interactive before background; the class's virtual time
-- advances to the granted score, and users whose last score it passed are forgotten.
local function grant(concurrency, lease_ms, now)
  while redis.call('ZCARD', HOLDERS) < concurrency do
    local prio = 'interactive'
    local top = redis.call('ZRANGE', WAIT.interactive, 0, 0, 'WITHSCORES')
    if #top == 0 then
      prio = 'background'
      top = redis.call('ZRANGE', WAIT.background, 0, 0, 'WITHSCORES')
    end
    if #top == 0 then return end
    local t, score = top[1], tonumber(top[2])
    redis.call('ZREM', WAIT[prio], t)
    redis.call('ZREM', WAIT_DL, t)
    redis.call('ZADD', HOLDERS, now + lease_ms, t)
    redis.call('HSET', GRANTED_AT, t, now)
    local vt = tonumber(redis.call('HGET', VTIME, prio) or '0')
    if score > vt then
      vt = score
      redis.call('HSET', VTIME, prio, vt)
    end
    redis.call('ZREMRANGEBYSCORE', LAST[prio], '-inf', vt)
  end
end

-- 0: holds a slot; n > 0: n-th in line (every interactive ticket is ahead of background ones); -1: gone.
local function position(t)
  if redis.call('ZSCORE', HOLDERS, t) then return 0 end
  local r = redis.call('ZRANK', WAIT.interactive, t)
  if r then return r + 1 end
  r = redis.call('ZRANK', WAIT.background, t)
  if r then return redis.call('ZCARD', WAIT.interactive) + r + 1 end
  return -1
end
"""

# ARGV: priority, user, concurrency, queue_max, lease_ms, wait_ms.
# Returns {ticket, position} or {'', -1, waiting, average hold ms} when the queue is full.
ENQUEUE = (
    _PRELUDE
    + """
local prio, user = ARGV[1], ARGV[2]
local concurrency, queue_max = slots(tonumber(ARGV[3])), tonumber(ARGV[4])
local lease_ms, wait_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
local now = now_ms()
expire(now)
grant(concurrency, lease_ms, now)
local waiting = redis.call('ZCARD', WAIT.interactive)
-- Only interactive requests are bounded: background ones are as many as the workers' job slots.
if prio == 'interactive' and waiting >= queue_max and redis.call('ZCARD', HOLDERS) >= concurrency then
  return {'', -1, waiting, math.floor(tonumber(redis.call('HGET', STATS, 'hold_ms') or '0'))}
end
local t = string.format('%015d', redis.call('HINCRBY', STATS, 'seq', 1))
local vt = tonumber(redis.call('HGET', VTIME, prio) or '0')
local score = math.max(vt, tonumber(redis.call('ZSCORE', LAST[prio], user) or '0')) + 1
redis.call('ZADD', LAST[prio], score, user)
redis.call('ZADD', WAIT[prio], score, t)
redis.call('ZADD', WAIT_DL, now + wait_ms, t)
grant(concurrency, lease_ms, now)
return {t, position(t)}
"""
)

# ARGV: ticket, concurrency, lease_ms, wait_ms. Refreshes the ticket's lease (held) or deadline
# (waiting), then grants what is free. Returns its position (0 held, -1 gone).
POLL = (
    _PRELUDE
    + """
local t, concurrency = ARGV[1], slots(tonumber(ARGV[2]))
local lease_ms, wait_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local now = now_ms()
redis.call('ZADD', HOLDERS, 'XX', now + lease_ms, t)
redis.call('ZADD', WAIT_DL, 'XX', now + wait_ms, t)
expire(now)
grant(concurrency, lease_ms, now)
return position(t)
"""
)

# ARGV: ticket, concurrency, lease_ms. Frees the slot or the waiting place, keeps a moving average of
# how long slots are held (for Retry-After), and grants what is free.
RELEASE = (
    _PRELUDE
    + """
local t, concurrency, lease_ms = ARGV[1], slots(tonumber(ARGV[2])), tonumber(ARGV[3])
local now = now_ms()
local since = redis.call('HGET', GRANTED_AT, t)
if since and redis.call('ZSCORE', HOLDERS, t) then
  local held = now - tonumber(since)
  local avg = tonumber(redis.call('HGET', STATS, 'hold_ms') or tostring(held))
  redis.call('HSET', STATS, 'hold_ms', 0.8 * avg + 0.2 * held)
end
redis.call('ZREM', HOLDERS, t)
redis.call('HDEL', GRANTED_AT, t)
redis.call('ZREM', WAIT.interactive, t)
redis.call('ZREM', WAIT.background, t)
redis.call('ZREM', WAIT_DL, t)
expire(now)
grant(concurrency, lease_ms, now)
return 1
"""
)
