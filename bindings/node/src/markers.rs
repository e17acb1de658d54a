//! The three-colour markers of RFC 2697 (`SrTcm`) and RFC 2698 (`TrTcm`):
//! `srtcmCreate` and `trtcmCreate` return functions bound to one marker,
//! which the classes of `node/lib/markers.js` wrap. Colours cross as small
//! integers (0 green, 1 yellow, 2 red: the order of [`Color`]), which the
//! JavaScript side names; colours going in are the names.

use std::sync::Arc;

use napi::bindgen_prelude::Unknown;
use napi::{Env, JsValue};
use napi_derive::napi;
use ratekeeper::{AnyClock, Argument, Color, SrTcm, TrTcm};

use crate::args;
use crate::bound::{Args, Binder, Named, Returned, Scratch};
use crate::clock;
use crate::error::{blame, guarded, Boxed, Failure, Given};
use crate::js::Js;

enum Marker {
    Sr(SrTcm<AnyClock>),
    Tr(TrTcm<AnyClock>),
}

/// One JavaScript marker; `tokens()` writes its two buckets to the scratch
/// words 0 and 1 (doubles).
struct Marking {
    marker: Marker,
    scratch: Scratch,
}

/// The object `srtcmCreate` and `trtcmCreate` return.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct MarkerMethods {
    /// Colour-blind marking of a packet of `bytes`: 0 green, 1 yellow, 2 red.
    #[napi(ts_type = "(bytes: number | bigint) => number")]
    pub mark: (),
    /// Colour-aware marking of a packet that arrives coloured `color`.
    #[napi(ts_type = "(bytes: number | bigint, color: unknown) => number")]
    pub mark_aware: (),
    /// Writes the buckets' tokens now to `scratch[0]` and `scratch[1]`
    /// (srTCM: committed, excess; trTCM: peak, committed).
    #[napi(ts_type = "() => void")]
    pub tokens: (),
    /// Where `tokens` writes.
    #[napi(ts_type = "Float64Array")]
    pub scratch: (),
}

fn bytes(args: &Args) -> Result<u64, Failure> {
    args::count(args.get(0), Argument::Bytes, "bytes")
}

fn code(color: Color) -> Returned {
    Returned::Number(match color {
        Color::Green => 0.0,
        Color::Yellow => 1.0,
        Color::Red => 2.0,
    })
}

fn mark(m: &Arc<Marking>, args: &Args) -> Result<Returned, Boxed> {
    let bytes = bytes(args)?;
    Ok(code(match &m.marker {
        Marker::Sr(sr) => sr.mark(bytes),
        Marker::Tr(tr) => tr.mark(bytes),
    }))
}

fn mark_aware(m: &Arc<Marking>, args: &Args) -> Result<Returned, Boxed> {
    let bytes = bytes(args)?;
    let value = args.get(1);
    let Some(name) = value.string() else {
        return Err(Failure::WrongType { argument: "color", value, expected: "a string" }.into());
    };
    let color = Color::from_name(&name).ok_or(Failure::OutOfRange {
        argument: "color",
        value,
        requirement: "must be \"green\", \"yellow\" or \"red\"",
    })?;
    Ok(code(match &m.marker {
        Marker::Sr(sr) => sr.mark_aware(bytes, color),
        Marker::Tr(tr) => tr.mark_aware(bytes, color),
    }))
}

fn tokens(m: &Arc<Marking>, _args: &Args) -> Result<Returned, Boxed> {
    let (a, b) = match &m.marker {
        Marker::Sr(sr) => sr.tokens(),
        Marker::Tr(tr) => tr.tokens(),
    };
    m.scratch.set_f64(0, a as f64);
    m.scratch.set_f64(1, b as f64);
    Ok(Returned::Undefined)
}

const METHODS: &[Named<Marking>] = &[(c"mark", 1, mark), (c"markAware", 2, mark_aware), (c"tokens", 0, tokens)];

/// The counts of a marker, named, in order: read, then blamed for the
/// library's errors.
fn counts(values: &[(Js, Argument, &'static str)]) -> Result<(Vec<u64>, Vec<Given>), Failure> {
    let mut counts = Vec::with_capacity(values.len());
    let mut given = Vec::with_capacity(values.len());
    for &(value, argument, name) in values {
        counts.push(args::count(value, argument, name)?);
        given.push(Given { argument, name, value });
    }
    Ok((counts, given))
}

fn bind(env: &Env, marker: Marker) -> Result<Unknown<'_>, Failure> {
    let marking = Arc::new(Marking { marker, scratch: Scratch::new(2) });
    let object = Binder::new(env.raw(), marking)?.methods(METHODS)?.scratch(c"scratch", |m| &m.scratch)?.finish();
    // SAFETY: a value just created in this call's environment.
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), object) })
}

/// Creates an RFC 2697 single rate three colour marker: committed rate
/// `cir` (bytes per second), committed burst `cbs`, excess burst `ebs`.
#[napi(ts_args_type = "cir: unknown, cbs: unknown, ebs: unknown, clock: unknown", ts_return_type = "MarkerMethods")]
pub fn srtcm_create<'env>(
    env: &'env Env,
    cir: Unknown<'_>,
    cbs: Unknown<'_>,
    ebs: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let (c, given) = counts(&[
            (js(cir), Argument::Cir, "cir"),
            (js(cbs), Argument::SrTcmCbs, "cbs"),
            (js(ebs), Argument::Ebs, "ebs"),
        ])?;
        let clock = clock::from_option(js(clock))?;
        bind(env, Marker::Sr(blame(SrTcm::with_clock(c[0], c[1], c[2], clock), &given)?))
    })
}

/// Creates an RFC 2698 two rate three colour marker: peak rate `pir` and
/// burst `pbs`, committed rate `cir` and burst `cbs`.
#[napi(
    ts_args_type = "pir: unknown, pbs: unknown, cir: unknown, cbs: unknown, clock: unknown",
    ts_return_type = "MarkerMethods"
)]
pub fn trtcm_create<'env>(
    env: &'env Env,
    pir: Unknown<'_>,
    pbs: Unknown<'_>,
    cir: Unknown<'_>,
    cbs: Unknown<'_>,
    clock: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let (c, given) = counts(&[
            (js(pir), Argument::Pir, "pir"),
            (js(pbs), Argument::Pbs, "pbs"),
            (js(cir), Argument::Cir, "cir"),
            (js(cbs), Argument::Cbs, "cbs"),
        ])?;
        let clock = clock::from_option(js(clock))?;
        bind(env, Marker::Tr(blame(TrTcm::with_clock(c[0], c[1], c[2], c[3], clock), &given)?))
    })
}
