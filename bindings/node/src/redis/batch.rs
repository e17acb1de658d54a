//! The exact-mode checks of one turn of the event loop, sent to Redis as one
//! task on the crate's runtime.
//!
//! Why: handed one by one to the crate's `check_with`, every check is a task
//! of its own — a wake-up of the runtime's thread from this one, a task
//! spawned, and (each task running alone) often a write on the connection
//! of its own. With 32 decisions in flight that thread, not Redis, was the
//! bottleneck: about 12 µs of its CPU per decision, against 9 µs when a
//! turn's checks go as one task (whose scripts the multiplexed connection
//! then sends together) — see benches/redis/node.
//!
//! How: `RedisLimiter.check` (node/lib/redis.js) queues a microtask the
//! first time it is called in a turn, then calls the native `check`, which
//! answers at once when a remembered refusal decides (no round trip, as
//! `check_with` does) and otherwise queues the check here ([`check`]). The microtask
//! runs once the turn's synchronous code and the microtasks before it are
//! done — after every worker woken by the same batch of answers has made
//! its next check — and calls [`redis_flush`], which sends them all. The
//! answers that come back together (one read of replies) go back to the
//! JavaScript thread together too (`Done::decisions`), so the next turn's
//! batch is as large.
//!
//! Checks queued when the thread ends (a worker terminated, the process
//! exiting before the microtask ran) are dropped with its thread-locals:
//! their Promises are abandoned with their environment.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;

use futures_util::stream::{FuturesUnordered, StreamExt};
use futures_util::FutureExt;
use napi::Env;
use napi_derive::napi;
use ratekeeper::Decision;
use ratekeeper_redis::{Error, RedisLimiter, RedisStore};

use crate::error::guarded;
use crate::promise::Done;

/// A check on its way to Redis: its Promise's way back, and the answer.
type Queued = Pin<Box<dyn Future<Output = (Done, Result<Decision, Error>)> + Send>>;

thread_local! {
    /// This JavaScript thread's checks since the last flush.
    static QUEUED: RefCell<Vec<Queued>> = const { RefCell::new(Vec::new()) };
}

/// Decides `cost` units for `key` at once if a remembered refusal can;
/// otherwise queues the check for the next [`redis_flush`].
pub(crate) fn check(limiter: &RedisLimiter, key: String, cost: u64, done: Done) {
    if let Some(refusal) = limiter.remembered_refusal(&key, cost) {
        return done.decision(Ok(refusal));
    }
    let limiter = limiter.clone();
    let check: Queued = Box::pin(async move {
        let result = limiter.check_async(&key, cost).await;
        (done, result)
    });
    QUEUED.with(|queued| queued.borrow_mut().push(check));
}

/// Sends the checks queued on this thread since the last call, as one task
/// on the crate's runtime. `node/lib/redis.js` calls it from a microtask.
#[napi]
pub fn redis_flush(env: &Env) -> napi::Result<()> {
    guarded(env, || {
        let queued = QUEUED.with(|queued| std::mem::take(&mut *queued.borrow_mut()));
        if queued.is_empty() {
            return Ok(());
        }
        let mut all: FuturesUnordered<Queued> = queued.into_iter().collect();
        RedisStore::spawn_with(
            async move {
                // The answers that arrived together (one read of replies)
                // go back together.
                while let Some(first) = all.next().await {
                    let mut answered = vec![first];
                    while let Some(Some(next)) = all.next().now_or_never() {
                        answered.push(next);
                    }
                    Done::decisions(answered);
                }
            },
            |()| {},
        );
        Ok(())
    })
}
