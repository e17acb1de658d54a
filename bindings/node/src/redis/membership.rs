//! `Membership`: this process's place in a group of nodes sharing limits
//! (`ratekeeper_redis::Membership`), which exact mode's `"localShare"`
//! policy divides its limit by. Joining and refreshing block in the crate,
//! so they run on libuv's thread pool.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper_redis::{Membership, RedisOption};

use super::store::store_of;
use super::{adopt, required_option_duration, Close, Held};
use crate::bound::{Binder, Named, Returned, Tagged};
use crate::error::{guarded, Failure};
use crate::js::{self, Js};
use crate::promise::{self, Answer};

/// One JavaScript `Membership`.
pub(crate) struct Member {
    membership: Held<Arc<Membership>>,
}

impl Tagged for Member {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x8451_f09b_8668_b5c7, upper: 0x7fbc_745f_7804_2b9b };
}

impl Close for Member {
    fn close(&self) {
        self.membership.take();
    }
}

/// The membership a limiter's options name (`membership`).
pub(crate) fn membership_of(value: Js) -> Result<Arc<Membership>, Failure> {
    let member = crate::bound::target_of::<Member>(value).ok_or(Failure::WrongType {
        argument: "membership",
        value,
        expected: "a Membership",
    })?;
    member.membership.get()
}

/// The object `redisMembershipJoin` resolves to.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MembershipMethods {
    /// The live nodes as last read (at least 1).
    #[napi(ts_type = "() => number")]
    pub nodes: (),
    /// Heartbeats now: a Promise of the live count.
    #[napi(ts_type = "() => Promise<number>")]
    pub refresh: (),
    /// Drops this handle on the membership: the node leaves the group once
    /// no limiter uses it either.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// This node's id in the group.
    #[napi(ts_type = "string")]
    pub node_id: (),
}

const METHODS: &[Named<Member>] = &[
    (c"nodes", 0, |m, _| Ok(Returned::Number(m.membership.get()?.nodes() as f64))),
    (c"refresh", 0, |m, args| {
        let membership = match m.membership.get() {
            Ok(membership) => membership,
            Err(failure) => return Ok(Returned::Value(promise::rejected(args.env, failure)?)),
        };
        let promise = promise::blocking(args.env, move || -> Answer {
            let counted = membership.refresh();
            Box::new(move |cx| cx.number(counted?.max(1) as f64))
        })?;
        Ok(Returned::Value(promise))
    }),
    (c"close", 0, |m, _| {
        m.close();
        Ok(Returned::Undefined)
    }),
];

/// Joins `group` in `store` as a new node, heartbeating every third of the
/// TTL (given in milliseconds or microseconds), and resolves to the
/// membership's bound functions.
#[napi(
    ts_args_type = "store: unknown, group: unknown, ttlMs: unknown, ttlMicros: unknown",
    ts_return_type = "Promise<MembershipMethods>"
)]
pub fn redis_membership_join<'env>(
    env: &'env Env,
    store: Unknown<'_>,
    group: Unknown<'_>,
    ttl_ms: Unknown<'_>,
    ttl_micros: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let store = store_of(js(store))?;
        let redis = store.get()?;
        let group_value = js(group);
        let group = group_value.string().ok_or(Failure::WrongType {
            argument: "group",
            value: group_value,
            expected: "a string",
        })?;
        let ttl = required_option_duration(RedisOption::Ttl, js(ttl_ms), js(ttl_micros))?;
        let promise = promise::blocking(env.raw(), move || -> Answer {
            let joined = Membership::join(&redis, &group, ttl);
            Box::new(move |cx| {
                let membership = joined?;
                let node_id = js::string(cx.env, membership.node_id())?;
                let target = Arc::new(Member { membership: Held::new(Arc::new(membership), "this Membership") });
                adopt(&store, &target);
                let binder = &mut Binder::new(cx.env, target)?;
                binder.methods(METHODS)?.tagged()?.value(c"nodeId", node_id)?;
                Ok(binder.finish())
            })
        })?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    })
}
