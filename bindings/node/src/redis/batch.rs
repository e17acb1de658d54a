//! The exact-mode checks of one turn of the event loop, sent to Redis
//! together: on the store's own socket (`pipe`), or as one task on the
//! crate's runtime, and for GCRA in a few script runs per limiter rather
//! than one per check.
//!
//! Why: handed one by one to the crate's `check_with`, every check is a task
//! of its own — a wake-up of the runtime's thread from this one, a task
//! spawned, and (each task running alone) often a write on the connection
//! of its own. With many decisions in flight that thread, not Redis, was
//! the bottleneck, and it spends less CPU per decision when a turn's checks
//! go as one task (whose scripts the multiplexed connection then sends
//! together). Sending a limiter's checks as one GCRA script run then pays
//! the call's fixed costs once, in Redis and here. (Sending, or settling,
//! a batch in two halves so that this thread and Redis overlap measured no
//! faster: each round trip's fixed cost, thread wake-ups included,
//! outweighs the overlap on two cores.) The figures: BENCHMARKS.md, section
//! "Redis from Node.js", and its earlier measurements
//! (`benches/earlier/redis-node.md`); `benches/redis/node` measures it.
//!
//! How: `RedisLimiter.check` (node/lib/redis.js) queues `flush` with
//! `setImmediate` the first time it is called in a turn of the event loop,
//! then calls the native `check`, which answers at once when a remembered
//! refusal decides (no round trip, as `check_with` does) and otherwise
//! queues the check here ([`check`]). The immediate runs once the turn's
//! I/O callbacks and their microtasks are done — after every HTTP request
//! read in that turn, and every worker woken by the same batch of answers,
//! has made its check — and calls [`redis_flush`], which sends each
//! limiter's checks together: on its store's own socket when that is open
//! (`pipe`: no thread involved, and the answers settle their Promises as
//! they arrive), otherwise as one `check_many_async` on the crate's
//! runtime, whose answers come back to the JavaScript thread together
//! (`Done::decisions`), so the next turn's batch is as large. (A microtask
//! flushed after each I/O callback: once per HTTP request under load.)
//!
//! Checks queued when the thread ends (a worker terminated, the process
//! exiting before the immediate ran) are dropped with its thread-locals:
//! their Promises are abandoned with their environment.

use std::cell::RefCell;
use std::sync::Arc;

use napi::Env;
use napi_derive::napi;
use ratekeeper_redis::{RedisLimiter, RedisStore, Requests};

use super::{pipe, Store};
use crate::error::guarded;
use crate::promise::Done;

/// One limiter's checks since the last flush, each with its Promise's way
/// back.
struct Queued {
    limiter: RedisLimiter,
    store: Arc<Store>,
    requests: Requests<Done>,
}

thread_local! {
    /// This JavaScript thread's checks since the last flush, by limiter.
    static QUEUED: RefCell<Vec<Queued>> = const { RefCell::new(Vec::new()) };
}

/// Decides `cost` units for `key` at once if a remembered refusal can;
/// otherwise queues the check for the next [`redis_flush`].
pub(crate) fn check(limiter: &RedisLimiter, store: &Arc<Store>, key: Vec<u8>, cost: u64, done: Done) {
    if let Some(refusal) = limiter.remembered_refusal(&key, cost) {
        return done.decision(Ok(refusal));
    }
    QUEUED.with(|queued| {
        let mut queued = queued.borrow_mut();
        // A turn's checks come from a few limiters: a scan is enough.
        let at = match queued.iter().position(|q| q.limiter.is(limiter)) {
            Some(at) => at,
            None => {
                queued.push(Queued { limiter: limiter.clone(), store: Arc::clone(store), requests: Vec::new() });
                queued.len() - 1
            }
        };
        queued[at].requests.push((key, cost, done));
    });
}

/// Sends the checks queued on this thread since the last call, as one task
/// on the crate's runtime. `node/lib/redis.js` calls it from an immediate
/// (`setImmediate`).
#[napi]
pub fn redis_flush(env: &Env) -> napi::Result<()> {
    guarded(env, || {
        let queued = QUEUED.with(|queued| std::mem::take(&mut *queued.borrow_mut()));
        for Queued { limiter, store, requests } in queued {
            // On the store's own socket when it can (`pipe`), else as one
            // task on the crate's runtime.
            let Err(requests) = pipe::check_many(&store, &limiter, requests) else { continue };
            let (requests, done): (Vec<_>, Vec<_>) =
                requests.into_iter().map(|(key, cost, done)| ((key, cost), done)).unzip();
            RedisStore::spawn_with(async move { limiter.check_many_async(requests).await }, move |answers| {
                Done::decisions(done.into_iter().zip(answers).collect())
            });
        }
        Ok(())
    })
}
