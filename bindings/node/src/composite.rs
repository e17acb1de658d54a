//! `CompositeLimiter`: several admission-style limits admitted all or
//! nothing. `compositeCreate` reads each part's options object (the same
//! options as the classes', plus `algorithm`), builds a
//! [`ratekeeper::CompositeLimiter`] and returns its bound functions, which
//! `node/lib/composite.js` wraps. An error in a part names it:
//! `limits[1].windowMs`.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, AnyCore, CompositeLimiter};

use crate::args;
use crate::bound::{Args, Binder, Hot, Named, Returned, Scratch, DECISION_WORDS};
use crate::clock;
use crate::error::{guarded, Boxed, Failure};
use crate::js::Js;
use crate::spec;

/// One JavaScript composite; its scratch holds the combined decision's
/// record, then one per part (`checkEach`).
struct Composite {
    limiter: CompositeLimiter<AnyClock>,
    scratch: Scratch,
}

/// The object `compositeCreate` returns.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct CompositeMethods {
    /// Admits `cost` in every part or in none; the combined decision to
    /// `scratch`.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub check: (),
    /// `check(1)`, reading no argument.
    #[napi(ts_type = "() => boolean")]
    pub check_one: (),
    /// `check(cost).allowed`, writing no decision.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub try_acquire: (),
    /// `tryAcquire(1)`, reading no argument.
    #[napi(ts_type = "() => boolean")]
    pub try_acquire_one: (),
    /// The combined decision `check` would make, consuming nothing.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub peek: (),
    /// `check`, with each part's decision after the combined one in `scratch`.
    #[napi(ts_type = "(cost?: number | bigint) => boolean")]
    pub check_each: (),
    /// Gives back `cost` units to every part (`CompositeLimiter::refund`).
    #[napi(ts_type = "(cost?: number | bigint) => void")]
    pub refund: (),
    /// How many parts.
    #[napi(ts_type = "number")]
    pub parts: (),
    /// Decision records: the combined one, then one per part.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

impl Hot for Composite {
    type Arg = u64;

    #[inline]
    fn arg(value: Option<Js>) -> Result<u64, Failure> {
        args::cost_or_one(value)
    }

    /// 0: `check(cost)`, 1: `tryAcquire(cost)`.
    #[inline]
    fn hot<const W: u8>(&self, cost: u64) -> Result<bool, Boxed> {
        let decision = self.limiter.check(cost);
        if W == 0 {
            self.scratch.write_decision(0, &decision);
        }
        Ok(decision.allowed)
    }
}

fn peek(c: &Arc<Composite>, args: &Args) -> Result<Returned, Boxed> {
    let decision = c.limiter.peek(args::cost_or_one(args.passed(0))?);
    c.scratch.write_decision(0, &decision);
    Ok(Returned::Bool(decision.allowed))
}

fn check_each(c: &Arc<Composite>, args: &Args) -> Result<Returned, Boxed> {
    let (decision, parts) = c.limiter.check_each(args::cost_or_one(args.passed(0))?);
    c.scratch.write_decision(0, &decision);
    for (i, part) in parts.iter().enumerate() {
        c.scratch.write_decision(DECISION_WORDS * (i + 1), part);
    }
    Ok(Returned::Bool(decision.allowed))
}

fn refund(c: &Arc<Composite>, args: &Args) -> Result<Returned, Boxed> {
    c.limiter.refund(args::cost_or_one(args.passed(0))?);
    Ok(Returned::Undefined)
}

const METHODS: &[Named<Composite>] = &[(c"peek", 1, peek), (c"checkEach", 1, check_each), (c"refund", 1, refund)];

/// Creates a composite of `limits`, an array of options objects each with
/// an `algorithm`, and returns its bound functions.
#[napi(ts_args_type = "limits: unknown, clock: unknown", ts_return_type = "CompositeMethods")]
pub fn composite_create<'env>(env: &'env Env, limits: Unknown<'_>, clock: Unknown<'_>) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let value = js(limits);
        let Some(parts) = value.elements()? else {
            return Err(Failure::WrongType { argument: "limits", value, expected: "an array of limiter options" });
        };
        // Each part is built alone first, so that an error names its part.
        let mut specs = Vec::with_capacity(parts.len());
        for (index, part) in parts.into_iter().enumerate() {
            let in_part = |inner| Failure::InPart { index, inner: Box::new(inner) };
            let (algorithm, values) = spec::part(part, "options").map_err(in_part)?;
            let (spec, _) = spec::build(algorithm, &values, AnyCore::new).map_err(in_part)?;
            specs.push(spec);
        }
        let clock = clock::from_option(js(clock))?;
        let limiter = CompositeLimiter::with_clock(&specs, clock)?;
        let scratch = Scratch::new(DECISION_WORDS * (specs.len() + 1));
        let count = specs.len();
        let binder = &mut Binder::new(env.raw(), Arc::new(Composite { limiter, scratch }))?;
        binder
            .methods(METHODS)?
            .hot::<0>((c"check", c"checkOne"))?
            .hot::<1>((c"tryAcquire", c"tryAcquireOne"))?
            .scratch(c"scratch", |c| &c.scratch)?
            .number(c"parts", count as f64)?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), binder.finish()) })
    })
}
