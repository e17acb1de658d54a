//! Resets: deleting a limiter's state in Redis, for `remove` (a key of a
//! keyed limiter, as the in-process keyed limiters' `remove`) and `reset`
//! (the one state of a Guava or concurrency limiter).
//!
//! Every key one state uses is deleted by one script run, atomically: a
//! decision running at the same time sees the whole state or none of it.
//! The keys of one state share a hash tag (see `keys.rs`), so the script
//! touches one Redis Cluster slot.

use std::sync::{Arc, OnceLock};

use crate::error::Error;
use crate::store::RedisStore;

/// Deletes `keys` (one state's): whether any of them existed.
pub(crate) async fn forget(store: &RedisStore, keys: Vec<String>) -> Result<bool, Error> {
    static SCRIPT: OnceLock<Arc<redis::Script>> = OnceLock::new();
    let script = Arc::clone(SCRIPT.get_or_init(|| Arc::new(crate::scripts::forget())));
    let reply = RedisStore::spawn(store.eval(script, keys, Vec::new())).await?;
    match reply {
        redis::Value::Int(deleted) => Ok(deleted > 0),
        other => Err(Error::Protocol(format!("not a count of deleted keys: {other:?}"))),
    }
}
