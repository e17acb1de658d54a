//! HTTP rate limiting from C: limits text (`"10/minute; 1000/day"`), a
//! keyed limiter built from it ([`rk_http_limiter`]), the response's
//! header fields, and the client's address behind trusted proxies
//! ([`rk_trusted_proxies`]) — the std layer's `ratekeeper::http`, whose
//! docs give the grammar, the field texts per draft and the address walk.
//!
//! A C server (or a C module of one: nginx, Apache, a Lua host) keys
//! requests by `rk_http_client_address()`, decides with
//! `rk_http_limiter_check()` and adds the fields `rk_http_limiter_write_fields()`
//! writes, as `Name: value\r\n` lines ready for an HTTP/1.1 response
//! (RFC 9112 §5).

use core::ffi::{c_char, CStr};
use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::IpAddr;

use ratekeeper::http::{
    client_address, limiter_from_text, parse_limits, response_fields, ClientKey, HeaderStyle, HttpLimiter, Ipv6Prefix,
    LimiterTextError, LimitsTextError, Policy, RateItem, TimeUnit, TrustedProxies,
};
use ratekeeper::{cost_from_i64, AnyClock, Decision, Value};

use crate::boundary::{free_box, guard, handle, Out};
use crate::decision::{named, rk_decision, write_text};
use crate::failure::Failure;
use crate::keyed::rk_keyed_options;
use crate::manual_clock::rk_manual_clock;
use crate::spec::{algorithm_of_code, rk_algorithm};
use crate::status::rk_status;
use crate::text;

/// The unit of a limit's window: one of the `RK_TIME_UNIT_*` constants.
pub type rk_time_unit = u32;

/// One second.
pub const RK_TIME_UNIT_SECOND: rk_time_unit = 1;
/// 60 seconds.
pub const RK_TIME_UNIT_MINUTE: rk_time_unit = 2;
/// 3,600 seconds.
pub const RK_TIME_UNIT_HOUR: rk_time_unit = 3;
/// 86,400 seconds.
pub const RK_TIME_UNIT_DAY: rk_time_unit = 4;
/// 30 days, as the Python `limits` library counts a month.
pub const RK_TIME_UNIT_MONTH: rk_time_unit = 5;
/// 365 days.
pub const RK_TIME_UNIT_YEAR: rk_time_unit = 6;

fn unit_code(unit: TimeUnit) -> rk_time_unit {
    match unit {
        TimeUnit::Second => RK_TIME_UNIT_SECOND,
        TimeUnit::Minute => RK_TIME_UNIT_MINUTE,
        TimeUnit::Hour => RK_TIME_UNIT_HOUR,
        TimeUnit::Day => RK_TIME_UNIT_DAY,
        TimeUnit::Month => RK_TIME_UNIT_MONTH,
        TimeUnit::Year => RK_TIME_UNIT_YEAR,
    }
}

/// Which version of the `RateLimit` header fields to write: one of the
/// `RK_HEADER_STYLE_*` constants.
pub type rk_header_style = u32;

/// No `RateLimit` fields (`Retry-After` and, when asked for, the legacy
/// `X-RateLimit-*` fields still go out).
pub const RK_HEADER_STYLE_NONE: rk_header_style = 0;
/// `RateLimit-Limit`, `-Remaining`, `-Reset` and `RateLimit-Policy`
/// (draft-ietf-httpapi-ratelimit-headers-06).
pub const RK_HEADER_STYLE_DRAFT_6: rk_header_style = 6;
/// `RateLimit: limit=…, remaining=…, reset=…` and `RateLimit-Policy`
/// (draft-07).
pub const RK_HEADER_STYLE_DRAFT_7: rk_header_style = 7;
/// Named policies in `RateLimit` and `RateLimit-Policy` (draft-08, the
/// shape of the current revision): the one to choose without a reason.
pub const RK_HEADER_STYLE_DRAFT_8: rk_header_style = 8;

fn header_style(style: rk_header_style) -> Result<HeaderStyle, Failure> {
    Ok(match style {
        RK_HEADER_STYLE_NONE => HeaderStyle::None,
        RK_HEADER_STYLE_DRAFT_6 => HeaderStyle::Draft6,
        RK_HEADER_STYLE_DRAFT_7 => HeaderStyle::Draft7,
        RK_HEADER_STYLE_DRAFT_8 => HeaderStyle::Draft8,
        other => {
            return Err(Failure::Invalid {
                argument: "style",
                value: Value::Int(i64::from(other)),
                requirement: "must be one of the RK_HEADER_STYLE_* constants",
            })
        }
    })
}

/// One limit of limits text: `amount` units per `multiples` × `unit`
/// (`"10/2 minutes"` is 10, 2, `RK_TIME_UNIT_MINUTE`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct rk_rate_item {
    /// Units the window admits: 1 to `INT64_MAX`.
    pub amount: i64,
    /// How many units the window lasts: at least 1.
    pub multiples: i64,
    /// An `RK_TIME_UNIT_*`.
    pub unit: rk_time_unit,
}

impl From<&RateItem> for rk_rate_item {
    fn from(item: &RateItem) -> Self {
        // The parser bounds both: amount to INT64_MAX, the window to
        // INT64_MAX microseconds.
        rk_rate_item {
            amount: i64::try_from(item.amount).unwrap_or(i64::MAX),
            multiples: i64::try_from(item.multiples).unwrap_or(i64::MAX),
            unit: unit_code(item.unit),
        }
    }
}

impl rk_rate_item {
    fn to_item(self) -> Result<RateItem, Failure> {
        let positive = |argument, value: i64| {
            u64::try_from(value).ok().filter(|&v| v >= 1).ok_or(Failure::Invalid {
                argument,
                value: Value::Int(value),
                requirement: "must be at least 1",
            })
        };
        let unit = TimeUnit::ALL.into_iter().find(|u| unit_code(*u) == self.unit).ok_or(Failure::Invalid {
            argument: "unit",
            value: Value::Int(i64::from(self.unit)),
            requirement: "must be one of the RK_TIME_UNIT_* constants",
        })?;
        Ok(RateItem {
            amount: positive("amount", self.amount)?,
            multiples: positive("multiples", self.multiples)?,
            unit,
        })
    }
}

/// Limits text from C: UTF-8 (anything else is refused at its first
/// invalid byte, which no limit can hold anyway).
///
/// # Safety
/// `text` is NULL or a NUL-terminated string that outlives `'a`.
unsafe fn limits_text<'a>(text: *const c_char) -> Result<&'a str, (Failure, Option<usize>)> {
    if text.is_null() {
        return Err((Failure::NullPointer { argument: "text" }, None));
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    core::str::from_utf8(bytes).map_err(|e| {
        let position = e.valid_up_to();
        let problem = format!("invalid rate limit text at position {position}: expected UTF-8 text");
        (Failure::Malformed { argument: "text", problem }, Some(position))
    })
}

fn text_failure(e: LimitsTextError) -> (Failure, Option<usize>) {
    (Failure::Malformed { argument: "text", problem: e.to_string() }, Some(e.position))
}

/// Runs `body`; when it fails on the text, stores the byte position in
/// `*out_error_position` (when not NULL) before the failure is reported.
fn with_position(
    out_error_position: *mut usize,
    body: impl FnOnce() -> Result<(), (Failure, Option<usize>)>,
) -> Result<(), Failure> {
    body().map_err(|(failure, position)| {
        if let Some(position) = position {
            // SAFETY: the caller's contract: NULL or valid for a write.
            if let Some(out) = unsafe { Out::optional(out_error_position) } {
                out.write(position);
            }
        }
        failure
    })
}

/// Parses limits text — the forms of the Python `limits` library, as
/// slowapi and Flask-Limiter users write them: `"10/minute"`, `"10 per
/// minute"`, `"10/2 minutes"`, `"100/hour; 1000/day"` (items separated by
/// `;`, `,` or `|`; units second, minute, hour, day, month (30 days), year
/// (365 days), singular or plural, any case) — into `out_items[0 ..
/// *out_count]`.
///
/// `items_len` 0 asks for the count only (`out_items` may then be NULL);
/// a non-zero `items_len` below the count gets nothing and
/// `RK_BUFFER_TOO_SMALL`.
///
/// Returns `RK_INVALID_ARGUMENT` when the text does not parse; then, the
/// one exception to "out-parameters are written only on RK_OK", the byte
/// offset where it went wrong goes to `*out_error_position` (when not
/// NULL), and the message says what was expected there ("invalid rate
/// limit text at position 3: expected a unit (second, minute, …)").
/// `RK_NULL_POINTER` when `text` or `out_count` is NULL, or `out_items` is
/// NULL with an `items_len` above 0.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string; `out_items` is NULL or valid
/// for writing `items_len` items; `out_count` and `out_error_position` are
/// NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_parse_limits(
    text: *const c_char,
    out_items: *mut rk_rate_item,
    items_len: usize,
    out_count: *mut usize,
    out_error_position: *mut usize,
) -> rk_status {
    guard("rk_http_parse_limits", || {
        with_position(out_error_position, || {
            // SAFETY: the caller's contract.
            let (text, out_count) =
                unsafe { (limits_text(text)?, Out::required(out_count, "out_count").map_err(|f| (f, None))?) };
            let items = parse_limits(text).map_err(text_failure)?;
            if items_len > 0 {
                if out_items.is_null() {
                    return Err((Failure::NullPointer { argument: "out_items" }, None));
                }
                if items_len < items.len() {
                    let failure = Failure::BufferTooSmall {
                        argument: "items_len",
                        needed: items.len(),
                        given: items_len,
                        unit: "items",
                    };
                    return Err((failure, None));
                }
                for (i, item) in items.iter().enumerate() {
                    // SAFETY: the caller's contract; `i < items.len() <= items_len`.
                    unsafe { out_items.add(i).write(item.into()) };
                }
            }
            out_count.write(items.len());
            Ok(())
        })
    })
}

/// Writes an item's policy name — what express-rate-limit names a quota
/// policy in the draft-8 fields: `"10-in-1min"`, `"100-in-2hrs"` — into
/// `buf` (the buffer protocol of every string this library writes).
///
/// Returns `RK_INVALID_ARGUMENT` when the item's `amount` or `multiples`
/// is below 1 or its `unit` not an `RK_TIME_UNIT_*`; `RK_NULL_POINTER`
/// when `item` or `out_len` is NULL, or `buf` is NULL with a `buf_len`
/// above 0.
///
/// # Safety
/// `item` is NULL or valid for reading; `buf` is NULL or valid for writing
/// `buf_len` bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_rate_item_policy_name(
    item: *const rk_rate_item,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_rate_item_policy_name", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let item = handle(item, "item")?.to_item()?;
            write_text(&item.policy_name(), buf, buf_len, out)
        }
    })
}

/// A keyed limiter built from limits text: one limiter per key (a client
/// address, a user id), each admitting a request only when every limit of
/// the text does (all or nothing), in bounded memory as `rk_keyed_limiter`.
///
/// Thread safety: as `rk_keyed_limiter`; only `rk_http_limiter_free()`
/// must not race with other calls on the handle.
#[derive(Debug)]
pub struct rk_http_limiter {
    limiter: HttpLimiter<AnyClock>,
}

/// Creates the keyed limiter of limits text (`rk_http_parse_limits()`'s
/// forms), each limit enforced by `algorithm` (`RK_ALGORITHM_*`;
/// `RK_ALGORITHM_SLIDING_WINDOW_COUNTER` is what the `limits` library's
/// users expect), holding at most `options->max_keys` keys, in
/// `*out_limiter`. Free it with `rk_http_limiter_free()`. `clock`: a
/// manual clock, or NULL for the monotonic clock.
///
/// Returns `RK_INVALID_ARGUMENT` when the text does not parse (the byte
/// offset then goes to `*out_error_position` when not NULL, as
/// `rk_http_parse_limits()` does), `algorithm` is not an
/// `RK_ALGORITHM_*`, a limit is out of the algorithm's range (a sliding
/// log holds at most 1048576), or the options are invalid (as
/// `rk_keyed_limiter_new()` says); `RK_NULL_POINTER` when `text`,
/// `options` or `out_limiter` is NULL.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string; `options` is NULL or valid
/// for reading; `clock` is NULL or a live clock; `out_limiter` is NULL or
/// valid for writing a pointer; `out_error_position` is NULL or valid for
/// a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_new(
    text: *const c_char,
    algorithm: rk_algorithm,
    options: *const rk_keyed_options,
    clock: *const rk_manual_clock,
    out_limiter: *mut *mut rk_http_limiter,
    out_error_position: *mut usize,
) -> rk_status {
    guard("rk_http_limiter_new", || {
        with_position(out_error_position, || {
            let plain = |f: Failure| (f, None);
            // SAFETY: the caller's contract.
            let (text, options, clock, out) = unsafe {
                (
                    limits_text(text)?,
                    handle(options, "options").map_err(plain)?,
                    clock.as_ref(),
                    Out::required(out_limiter, "out_limiter").map_err(plain)?,
                )
            };
            let algorithm = algorithm_of_code(algorithm).ok_or_else(|| {
                plain(Failure::Invalid {
                    argument: "algorithm",
                    value: Value::Int(i64::from(algorithm)),
                    requirement: "must be one of the RK_ALGORITHM_* constants",
                })
            })?;
            let options = options.to_options().map_err(plain)?;
            let limiter = limiter_from_text(text, algorithm, options, rk_manual_clock::any_clock(clock)).map_err(
                |e| match e {
                    LimiterTextError::Text(e) => text_failure(e),
                    LimiterTextError::Invalid(e) => plain(e.into()),
                },
            )?;
            out.write(Box::into_raw(Box::new(rk_http_limiter { limiter })));
            Ok(())
        })
    })
}

/// Frees a limiter made by `rk_http_limiter_new()`. `NULL` does nothing.
///
/// # Safety
/// `limiter` is NULL or a live limiter that no other call is using.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_free(limiter: *mut rk_http_limiter) {
    // SAFETY: the caller's contract.
    unsafe { free_box("rk_http_limiter_free", limiter) }
}

/// How many limits the text had, in `*out_len`: the length of the
/// `out_parts` arrays `rk_http_limiter_check()` fills.
///
/// Returns `RK_NULL_POINTER` when `limiter` or `out_len` is NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `out_len` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_len(limiter: *const rk_http_limiter, out_len: *mut usize) -> rk_status {
    guard("rk_http_limiter_len", || {
        // SAFETY: the caller's contract.
        let (limiter, out) = unsafe { (handle(limiter, "limiter")?, Out::required(out_len, "out_len")?) };
        out.write(limiter.limiter.items().len());
        Ok(())
    })
}

/// One decision of an HTTP limiter into the caller's out-parameters.
///
/// # Safety
/// As `rk_http_limiter_check()`.
#[allow(clippy::too_many_arguments)]
unsafe fn decide(
    limiter: *const rk_http_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
    peek: bool,
) -> Result<(), Failure> {
    // SAFETY: the caller's contract.
    let (limiter, key, out) = unsafe {
        (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::required(out_decision, "out_decision")?)
    };
    let needed = limiter.limiter.items().len();
    if parts_len > 0 && out_parts.is_null() {
        return Err(Failure::NullPointer { argument: "out_parts" });
    }
    if parts_len > 0 && parts_len < needed {
        return Err(Failure::BufferTooSmall {
            argument: "parts_len",
            needed,
            given: parts_len,
            unit: "decisions (one per limit)",
        });
    }
    let cost = cost_from_i64(cost)?;
    let (decision, parts) = if peek { limiter.limiter.peek(key, cost)? } else { limiter.limiter.check(key, cost)? };
    out.write(decision.into());
    if parts_len > 0 {
        for (i, part) in parts.into_iter().enumerate() {
            // SAFETY: the caller's contract; `i < needed <= parts_len`.
            unsafe { out_parts.add(i).write(part.into()) };
        }
    }
    Ok(())
}

/// Admits a request of `cost` units for the key of `key_len` bytes at
/// `key` in every limit, or in none, storing the combined decision (the
/// strictest limit's) in `*out_decision` and, when `parts_len` is not 0,
/// each limit's own decision in `out_parts[0 .. len]` (`len` from
/// `rk_http_limiter_len()`; a limit that would have admitted a refused
/// request shows its state untouched) — what
/// `rk_http_limiter_write_fields()` needs. A refusal consumes nothing and
/// is not an error.
///
/// Returns `RK_BUFFER_TOO_SMALL`, consuming nothing, when `parts_len` is
/// not 0 and below the number of limits; `RK_INVALID_ARGUMENT` when `cost`
/// is negative or the key longer than the options' `max_key_bytes`;
/// `RK_NULL_POINTER` when `limiter` or `out_decision` is NULL, `key` is
/// NULL with a `key_len` above 0, or `out_parts` is NULL with a
/// `parts_len` above 0.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_decision` is NULL or valid for a write;
/// `out_parts` is NULL or valid for writing `parts_len` decisions.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_check(
    limiter: *const rk_http_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> rk_status {
    guard("rk_http_limiter_check", || {
        // SAFETY: the caller's contract.
        unsafe { decide(limiter, key, key_len, cost, out_decision, out_parts, parts_len, false) }
    })
}

/// The decisions `rk_http_limiter_check()` would make now; consumes
/// nothing and creates no key. Arguments and statuses as
/// `rk_http_limiter_check()`.
///
/// # Safety
/// As `rk_http_limiter_check()`.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_peek(
    limiter: *const rk_http_limiter,
    key: *const c_char,
    key_len: usize,
    cost: i64,
    out_decision: *mut rk_decision,
    out_parts: *mut rk_decision,
    parts_len: usize,
) -> rk_status {
    guard("rk_http_limiter_peek", || {
        // SAFETY: the caller's contract.
        unsafe { decide(limiter, key, key_len, cost, out_decision, out_parts, parts_len, true) }
    })
}

/// Forgets a key (its next request starts whole); stores in
/// `*out_removed` (when not NULL) whether it was held.
///
/// Returns `RK_INVALID_ARGUMENT` when the key is too long;
/// `RK_NULL_POINTER` when `limiter`, or `key` with a `key_len` above 0, is
/// NULL.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `key` is NULL or valid for reading
/// `key_len` bytes; `out_removed` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_remove(
    limiter: *const rk_http_limiter,
    key: *const c_char,
    key_len: usize,
    out_removed: *mut bool,
) -> rk_status {
    guard("rk_http_limiter_remove", || {
        // SAFETY: the caller's contract.
        let (limiter, key, out) =
            unsafe { (handle(limiter, "limiter")?, text::bytes(key, key_len, "key")?, Out::optional(out_removed)) };
        let removed = limiter.limiter.remove(key)?;
        if let Some(out) = out {
            out.write(removed);
        }
        Ok(())
    })
}

/// `unix_now_secs` from C: not negative.
fn unix_secs(value: i64) -> Result<u64, Failure> {
    u64::try_from(value).map_err(|_| Failure::Invalid {
        argument: "unix_now_secs",
        value: Value::Int(value),
        requirement: "must not be negative",
    })
}

/// The fields as HTTP/1.1 field lines: `Name: value\r\n` each.
fn field_lines(fields: &[(&'static str, String)]) -> String {
    let mut out = String::new();
    for (name, value) in fields {
        let _ = write!(out, "{name}: {value}\r\n");
    }
    out
}

/// Writes every header field of a response to a request `rk_http_limiter_check()`
/// decided — `decision` and its `parts_len` parts, each limit named by its
/// policy name — as `Name: value\r\n` lines into `buf` (the buffer
/// protocol of every string this library writes).
///
/// `style` chooses the `RateLimit` fields (`RK_HEADER_STYLE_*`, the texts
/// express-rate-limit sends for each draft); `legacy` adds
/// `X-RateLimit-Limit`, `-Remaining` and `-Reset` (the reset as Unix
/// seconds: `unix_now_secs` is the caller's clock); `Retry-After` (whole
/// seconds, rounded up) goes out on every refusal a wait can admit,
/// whatever the style. For example, draft 8 and one limit of 10 per
/// minute:
///
/// ```text
/// RateLimit-Policy: "10-in-1min";q=10;w=60
/// RateLimit: "10-in-1min";r=9;t=60
/// ```
///
/// Returns `RK_INVALID_ARGUMENT` when `parts_len` is not the number of
/// limits (naming `limits_len`), `style` is not an `RK_HEADER_STYLE_*` or
/// `unix_now_secs` is negative; `RK_NULL_POINTER` when `limiter`,
/// `decision`, `parts` or `out_len` is NULL, or `buf` is NULL with a
/// `buf_len` above 0.
///
/// # Safety
/// `limiter` is NULL or a live limiter; `decision` is NULL or valid for
/// reading; `parts` is NULL or valid for reading `parts_len` decisions;
/// `buf` is NULL or valid for writing `buf_len` bytes; `out_len` is NULL or
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_limiter_write_fields(
    limiter: *const rk_http_limiter,
    decision: *const rk_decision,
    parts: *const rk_decision,
    parts_len: usize,
    style: rk_header_style,
    legacy: bool,
    unix_now_secs: i64,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_http_limiter_write_fields", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let limiter = handle(limiter, "limiter")?;
            let combined = Decision::from(handle(decision, "decision")?);
            let parts: Vec<Decision> = text::slice(parts, parts_len, "parts")?.iter().map(Decision::from).collect();
            let fields =
                limiter.limiter.fields(&combined, &parts, header_style(style)?, legacy, unix_secs(unix_now_secs)?)?;
            write_text(&field_lines(&fields), buf, buf_len, out)
        }
    })
}

/// `rk_http_limiter_write_fields()` for decisions of any limiter: `parts[i]`
/// named `names[i]` (printable ASCII), `parts_len` at least 1. Statuses as
/// `rk_http_limiter_write_fields()`, and `RK_INVALID_ARGUMENT` naming
/// `names` for a name that is not printable ASCII.
///
/// # Safety
/// `decision` is NULL or valid for reading; `parts` and `names` are NULL
/// or valid for reading `parts_len` elements, each name NULL or a
/// NUL-terminated string; `buf` is NULL or valid for writing `buf_len`
/// bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_write_fields(
    decision: *const rk_decision,
    parts: *const rk_decision,
    names: *const *const c_char,
    parts_len: usize,
    style: rk_header_style,
    legacy: bool,
    unix_now_secs: i64,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_http_write_fields", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let combined = Decision::from(handle(decision, "decision")?);
            let named = named(parts, names, parts_len)?;
            let policies: Vec<Policy<'_>> = named.iter().map(|&(name, decision)| Policy { name, decision }).collect();
            let fields =
                response_fields(&combined, &policies, header_style(style)?, legacy, unix_secs(unix_now_secs)?)?;
            write_text(&field_lines(&fields), buf, buf_len, out)
        }
    })
}

/// The proxies whose `Forwarded` and `X-Forwarded-For` fields
/// `rk_http_client_address()` believes.
///
/// Immutable once made: any number of threads may use it at once; only
/// `rk_trusted_proxies_free()` must not race with other calls on it.
#[derive(Debug)]
pub struct rk_trusted_proxies {
    proxies: TrustedProxies,
}

/// Creates the list of trusted proxies from `entries_len` strings: an
/// address (`"::1"`, `"192.168.1.7"`), a CIDR block (`"10.0.0.0/8"`), or
/// `"loopback"` (127.0.0.0/8, ::1) or `"private"` (RFC 1918 and
/// fc00::/7), in `*out_proxies`. `entries_len` 0 trusts no proxy. Free it
/// with `rk_trusted_proxies_free()`.
///
/// Returns `RK_INVALID_ARGUMENT` for an entry that is none of those (the
/// message names it: `entries[1]: …`); `RK_NULL_POINTER` when `entries`
/// (with an `entries_len` above 0), one of its strings, or `out_proxies`
/// is NULL.
///
/// # Safety
/// `entries` is NULL or valid for reading `entries_len` pointers, each
/// NULL or a NUL-terminated string; `out_proxies` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_trusted_proxies_new(
    entries: *const *const c_char,
    entries_len: usize,
    out_proxies: *mut *mut rk_trusted_proxies,
) -> rk_status {
    guard("rk_trusted_proxies_new", || {
        // SAFETY: the caller's contract.
        let (entries, out) =
            unsafe { (text::slice(entries, entries_len, "entries")?, Out::required(out_proxies, "out_proxies")?) };
        let entries = entries
            .iter()
            .enumerate()
            .map(|(i, &entry)| {
                // SAFETY: the caller's contract: each entry NULL or a NUL-terminated string.
                unsafe { text::c_str(entry, "entries") }.map_err(|f| Failure::in_element("entries", i, f))
            })
            .collect::<Result<Vec<&str>, _>>()?;
        let proxies = TrustedProxies::parse(entries).map_err(|e| {
            Failure::in_element(
                "entries",
                e.index,
                Failure::Malformed { argument: "entries", problem: format!("expected {}", e.expected) },
            )
        })?;
        out.write(Box::into_raw(Box::new(rk_trusted_proxies { proxies })));
        Ok(())
    })
}

/// Frees a list made by `rk_trusted_proxies_new()`. `NULL` does nothing.
///
/// # Safety
/// `proxies` is NULL or a live list that no other call is using.
#[no_mangle]
pub unsafe extern "C" fn rk_trusted_proxies_free(proxies: *mut rk_trusted_proxies) {
    // SAFETY: the caller's contract.
    unsafe { free_box("rk_trusted_proxies_free", proxies) }
}

/// A header field's value from C: NULL is an absent field; bytes that are
/// not UTF-8 are kept as U+FFFD, which makes the entry holding them
/// malformed — a client's header is never the caller's error.
///
/// # Safety
/// `value` is NULL or a NUL-terminated string that outlives `'a`.
unsafe fn field_value<'a>(value: *const c_char) -> Option<Cow<'a, str>> {
    // SAFETY: the caller's contract.
    (!value.is_null()).then(|| String::from_utf8_lossy(unsafe { CStr::from_ptr(value) }.to_bytes()))
}

/// Writes the client's address — the TCP peer `peer`, or, while the
/// current hop is a trusted proxy, the hop before it named by `forwarded`
/// (the `Forwarded` field, RFC 7239, preferred) or `x_forwarded_for` — as
/// text (`"203.0.113.9"`, `"2001:db8::1"`) into `buf` (the buffer protocol
/// of every string this library writes; 46 bytes always suffice).
///
/// `forwarded` and `x_forwarded_for` are the fields' values (several field
/// lines joined by `", "`), or NULL when absent. `trusted` NULL trusts no
/// proxy: the peer is the client. An untrusted peer's fields are never
/// read, so a forged `X-Forwarded-For` changes nothing; a malformed entry
/// stops the walk at the last good hop; IPv4-mapped IPv6 addresses are
/// written as IPv4.
///
/// Returns `RK_INVALID_ARGUMENT` when `peer` is not an IP address (the
/// server's own input, so an error); `RK_NULL_POINTER` when `peer` or
/// `out_len` is NULL, or `buf` is NULL with a `buf_len` above 0.
///
/// # Safety
/// `peer`, `forwarded` and `x_forwarded_for` are NULL or NUL-terminated
/// strings; `trusted` is NULL or a live list; `buf` is NULL or valid for
/// writing `buf_len` bytes; `out_len` is NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_http_client_address(
    peer: *const c_char,
    forwarded: *const c_char,
    x_forwarded_for: *const c_char,
    trusted: *const rk_trusted_proxies,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_http_client_address", || {
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let client = client_of(peer, forwarded, x_forwarded_for, trusted)?;
            write_text(&client.to_string(), buf, buf_len, out)
        }
    })
}

/// The client's address of `rk_http_client_address()`.
///
/// # Safety
/// As `rk_http_client_address()`.
unsafe fn client_of(
    peer: *const c_char,
    forwarded: *const c_char,
    x_forwarded_for: *const c_char,
    trusted: *const rk_trusted_proxies,
) -> Result<IpAddr, Failure> {
    // SAFETY: the caller's contract.
    unsafe {
        let peer_text = text::c_str(peer, "peer")?;
        let peer: IpAddr = peer_text.trim().parse().map_err(|_| Failure::Malformed {
            argument: "peer",
            problem: format!("{peer_text:?} is not an IP address"),
        })?;
        let none = TrustedProxies::none();
        let trusted = trusted.as_ref().map_or(&none, |t| &t.proxies);
        let (forwarded, xff) = (field_value(forwarded), field_value(x_forwarded_for));
        Ok(client_address(peer, forwarded.as_deref(), xff.as_deref(), trusted))
    }
}

/// The IPv6 prefix `rk_http_client_key()` keys clients by unless told
/// otherwise: a /56, what one subscriber is commonly given (as
/// express-rate-limit 8's `ipv6Subnet`).
pub const RK_IPV6_PREFIX_DEFAULT: i32 = 56;
// A literal for cbindgen, held to the Rust default.
const _: () = assert!(RK_IPV6_PREFIX_DEFAULT == Ipv6Prefix::DEFAULT.bits() as i32);

/// Writes the client's rate-limit key — the client's address as
/// `rk_http_client_address()` finds it, an IPv6 client's by the first
/// `ipv6_prefix` bits (`RK_IPV6_PREFIX_DEFAULT`, 56, for the block one
/// subscriber is given; 128 for the whole address) — as text into `buf`
/// (the buffer protocol of every string this library writes; 44 bytes
/// always suffice): `"203.0.113.9"`, `"2001:db8:0:100::/56"`,
/// `"2001:db8::1"` (prefix 128). The same key as the Python and Node
/// middleware give the same client, so they can share a Redis limiter.
///
/// Returns `RK_INVALID_ARGUMENT` when `ipv6_prefix` is not from 1 to 128
/// or `peer` is not an IP address; `RK_NULL_POINTER` as
/// `rk_http_client_address()`.
///
/// # Safety
/// As `rk_http_client_address()`.
#[no_mangle]
pub unsafe extern "C" fn rk_http_client_key(
    peer: *const c_char,
    forwarded: *const c_char,
    x_forwarded_for: *const c_char,
    trusted: *const rk_trusted_proxies,
    ipv6_prefix: i32,
    buf: *mut c_char,
    buf_len: usize,
    out_len: *mut usize,
) -> rk_status {
    guard("rk_http_client_key", || {
        let prefix = Ipv6Prefix::new(i64::from(ipv6_prefix))
            .map_err(|e| Failure::Malformed { argument: "ipv6_prefix", problem: e.to_string() })?;
        // SAFETY: the caller's contract.
        unsafe {
            let out = Out::required(out_len, "out_len")?;
            let client = client_of(peer, forwarded, x_forwarded_for, trusted)?;
            write_text(&ClientKey::new(client, prefix).to_string(), buf, buf_len, out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use crate::spec::RK_ALGORITHM_FIXED_WINDOW;

    #[test]
    fn parse_reports_the_position() {
        let mut items = [rk_rate_item::default(); 2];
        let (mut count, mut position) = (0usize, usize::MAX);
        // SAFETY: live buffers.
        unsafe {
            let s = rk_http_parse_limits(
                c"1/second; 5 per 2 hours".as_ptr(),
                items.as_mut_ptr(),
                2,
                &mut count,
                &mut position,
            );
            assert_eq!(s, rk_status::RK_OK);
            assert_eq!(count, 2);
            assert_eq!(items[1], rk_rate_item { amount: 5, multiples: 2, unit: RK_TIME_UNIT_HOUR });
            assert_eq!(position, usize::MAX, "untouched on success");
            let s = rk_http_parse_limits(c"10/fortnight".as_ptr(), items.as_mut_ptr(), 2, &mut count, &mut position);
            assert_eq!(s, rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(position, 3);
            assert_eq!(last_argument().as_deref(), Some("text"));
            assert!(last_message().contains("at position 3: expected a unit"), "{}", last_message());
            let s = rk_http_parse_limits(c"1/s\xffc".as_ptr(), items.as_mut_ptr(), 2, &mut count, &mut position);
            assert_eq!((s, position), (rk_status::RK_INVALID_ARGUMENT, 3));
            let s = rk_http_parse_limits(
                c"1/second;2/day;3/year".as_ptr(),
                items.as_mut_ptr(),
                2,
                &mut count,
                &mut position,
            );
            assert_eq!(s, rk_status::RK_BUFFER_TOO_SMALL);
            let s = rk_http_parse_limits(
                c"1/second;2/day;3/year".as_ptr(),
                core::ptr::null_mut(),
                0,
                &mut count,
                core::ptr::null_mut(),
            );
            assert_eq!((s, count), (rk_status::RK_OK, 3));
        }
    }

    #[test]
    fn limiter_fields_and_client_address() {
        let options = rk_keyed_options { max_keys: 100, ..Default::default() };
        let mut limiter = core::ptr::null_mut();
        let mut decision = rk_decision::from(Decision::allowed(0, 0, 0, 0));
        let mut parts = [decision; 2];
        let mut buf = [0 as c_char; 256];
        let mut len = 0usize;
        // SAFETY: live buffers; the limiter is freed once.
        unsafe {
            let s = rk_http_limiter_new(
                c"2/second; 3/minute".as_ptr(),
                RK_ALGORITHM_FIXED_WINDOW,
                &options,
                core::ptr::null(),
                &mut limiter,
                core::ptr::null_mut(),
            );
            assert_eq!(s, rk_status::RK_OK);
            for _ in 0..2 {
                let s = rk_http_limiter_check(limiter, c"k".as_ptr(), 1, 1, &mut decision, parts.as_mut_ptr(), 2);
                assert_eq!(s, rk_status::RK_OK);
            }
            let s = rk_http_limiter_check(limiter, c"k".as_ptr(), 1, 1, &mut decision, parts.as_mut_ptr(), 2);
            assert_eq!((s, decision.allowed, parts[1].remaining), (rk_status::RK_OK, false, 1));
            let s = rk_http_limiter_write_fields(
                limiter,
                &decision,
                parts.as_ptr(),
                2,
                RK_HEADER_STYLE_DRAFT_8,
                false,
                0,
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
            );
            assert_eq!(s, rk_status::RK_OK);
            let text = CStr::from_ptr(buf.as_ptr()).to_str().unwrap();
            assert!(text.starts_with("RateLimit-Policy: \"2-in-1sec\";q=2;w=1, \"3-in-1min\";q=3;w=60\r\n"), "{text}");
            assert!(text.ends_with("Retry-After: 1\r\n"), "{text}");
            assert_eq!(len, text.len());
            let s = rk_http_limiter_write_fields(
                limiter,
                &decision,
                parts.as_ptr(),
                1,
                RK_HEADER_STYLE_DRAFT_8,
                false,
                0,
                buf.as_mut_ptr(),
                256,
                &mut len,
            );
            assert_eq!((s, last_argument().as_deref()), (rk_status::RK_INVALID_ARGUMENT, Some("limits_len")));
            rk_http_limiter_free(limiter);

            let entries = [c"10.0.0.0/8".as_ptr()];
            let mut proxies = core::ptr::null_mut();
            assert_eq!(rk_trusted_proxies_new(entries.as_ptr(), 1, &mut proxies), rk_status::RK_OK);
            let s = rk_http_client_address(
                c"10.0.0.2".as_ptr(),
                core::ptr::null(),
                c"6.6.6.6, 198.51.100.7".as_ptr(),
                proxies,
                buf.as_mut_ptr(),
                buf.len(),
                &mut len,
            );
            assert_eq!(s, rk_status::RK_OK);
            assert_eq!(CStr::from_ptr(buf.as_ptr()).to_str().unwrap(), "198.51.100.7");
            rk_trusted_proxies_free(proxies);
            let bad = [c"10.0.0.0/8".as_ptr(), c"nope".as_ptr()];
            assert_eq!(rk_trusted_proxies_new(bad.as_ptr(), 2, &mut proxies), rk_status::RK_INVALID_ARGUMENT);
            assert!(last_message().contains("entries[1]"), "{}", last_message());
        }
    }
}
