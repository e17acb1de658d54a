//! [`rk_srtcm`] and [`rk_trtcm`]: the three-colour markers of RFC 2697 and
//! RFC 2698, through the std layer's `SrTcm<AnyClock>` and
//! `TrTcm<AnyClock>`, and [`rk_color`].

use ratekeeper::{unsigned_from_i64, AnyClock, Argument, Color, SrTcm, TrTcm, Value};

use crate::boundary::{free_box, guard, handle, Out};
use crate::failure::Failure;
use crate::manual_clock::rk_manual_clock;
use crate::status::rk_status;

/// A packet's colour, as the markers give it: one of the `RK_COLOR_*`
/// constants.
pub type rk_color = u32;

/// Conforming.
pub const RK_COLOR_GREEN: rk_color = 0;
/// Exceeding the committed rate or burst, not the other limit.
pub const RK_COLOR_YELLOW: rk_color = 1;
/// Exceeding every limit.
pub const RK_COLOR_RED: rk_color = 2;

fn to_c(color: Color) -> rk_color {
    match color {
        Color::Green => RK_COLOR_GREEN,
        Color::Yellow => RK_COLOR_YELLOW,
        Color::Red => RK_COLOR_RED,
    }
}

fn from_c(color: rk_color) -> Result<Color, Failure> {
    match color {
        RK_COLOR_GREEN => Ok(Color::Green),
        RK_COLOR_YELLOW => Ok(Color::Yellow),
        RK_COLOR_RED => Ok(Color::Red),
        other => Err(Failure::Invalid {
            argument: "pre_color",
            value: Value::Int(i64::from(other)),
            requirement: "must be RK_COLOR_GREEN, RK_COLOR_YELLOW or RK_COLOR_RED",
        }),
    }
}

/// A colour's name: `"green"`, `"yellow"` or `"red"` (as the conformance
/// vectors and the other languages spell it), or NULL for a value that is
/// not an `RK_COLOR_*`.
///
/// Never fails; the string is static and must not be freed.
#[no_mangle]
pub extern "C" fn rk_color_name(color: rk_color) -> *const core::ffi::c_char {
    std::panic::catch_unwind(|| match color {
        RK_COLOR_GREEN => c"green".as_ptr(),
        RK_COLOR_YELLOW => c"yellow".as_ptr(),
        RK_COLOR_RED => c"red".as_ptr(),
        _ => core::ptr::null(),
    })
    .unwrap_or(core::ptr::null())
}

/// RFC 2697's single rate three colour marker: marks packets green, yellow
/// or red against a committed information rate (`cir`, bytes per second)
/// with a committed burst (`cbs`) and an excess burst (`ebs`), both buckets
/// full at creation.
///
/// Thread safety: as `rk_limiter`; only `rk_srtcm_free()` must not race
/// with other calls on the handle.
#[derive(Debug)]
pub struct rk_srtcm {
    marker: SrTcm<AnyClock>,
}

/// RFC 2698's two rate three colour marker: red above the peak rate (`pir`,
/// burst `pbs`), yellow above the committed rate (`cir`, burst `cbs`),
/// green within both; both buckets full at creation.
///
/// Thread safety: as `rk_limiter`; only `rk_trtcm_free()` must not race
/// with other calls on the handle.
#[derive(Debug)]
pub struct rk_trtcm {
    marker: TrTcm<AnyClock>,
}

/// A byte count from C.
fn bytes(bytes: i64) -> Result<u64, Failure> {
    Ok(unsigned_from_i64(Argument::Bytes, bytes)?)
}

/// Creates an srTCM (RFC 2697) in `*out_marker`; free it with
/// `rk_srtcm_free()`. `clock`: a manual clock, or NULL for the monotonic
/// clock.
///
/// Returns `RK_INVALID_ARGUMENT` when `cir` is not positive, `cbs` or `ebs`
/// is negative, or both are 0; `RK_NULL_POINTER` when `out_marker` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_marker` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_srtcm_new(
    cir: i64,
    cbs: i64,
    ebs: i64,
    clock: *const rk_manual_clock,
    out_marker: *mut *mut rk_srtcm,
) -> rk_status {
    guard("rk_srtcm_new", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_marker, "out_marker")?) };
        let (cir, cbs, ebs) = (
            unsigned_from_i64(Argument::Cir, cir)?,
            unsigned_from_i64(Argument::SrTcmCbs, cbs)?,
            unsigned_from_i64(Argument::Ebs, ebs)?,
        );
        let marker = SrTcm::with_clock(cir, cbs, ebs, rk_manual_clock::any_clock(clock))?;
        out.write(Box::into_raw(Box::new(rk_srtcm { marker })));
        Ok(())
    })
}

/// Frees an srTCM. `NULL` does nothing.
///
/// # Safety
/// `marker` is NULL or a marker from `rk_srtcm_new()` that has not been
/// freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_srtcm_free(marker: *mut rk_srtcm) {
    // SAFETY: the caller's contract: NULL or a live box from rk_srtcm_new that
    // no other call is using.
    unsafe { free_box("rk_srtcm_free", marker) }
}

/// Marks a packet of `bytes` now, colour-blind (RFC 2697 §3), in
/// `*out_color`.
///
/// Returns `RK_INVALID_ARGUMENT`, marking nothing, when `bytes` is
/// negative; `RK_NULL_POINTER` when `marker` or `out_color` is NULL.
///
/// # Safety
/// `marker` is NULL or a live marker; `out_color` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_srtcm_mark(marker: *const rk_srtcm, bytes: i64, out_color: *mut rk_color) -> rk_status {
    guard("rk_srtcm_mark", || {
        // SAFETY: the caller's contract.
        let (marker, out) = unsafe { (handle(marker, "marker")?, Out::required(out_color, "out_color")?) };
        out.write(to_c(marker.marker.mark(self::bytes(bytes)?)));
        Ok(())
    })
}

/// Marks a packet of `bytes` that arrives coloured `pre_color`,
/// colour-aware (RFC 2697 §3): a colour is never improved.
///
/// Returns `RK_INVALID_ARGUMENT`, marking nothing, when `bytes` is
/// negative or `pre_color` is not an `RK_COLOR_*`; `RK_NULL_POINTER` when
/// `marker` or `out_color` is NULL.
///
/// # Safety
/// As `rk_srtcm_mark()`.
#[no_mangle]
pub unsafe extern "C" fn rk_srtcm_mark_aware(
    marker: *const rk_srtcm,
    bytes: i64,
    pre_color: rk_color,
    out_color: *mut rk_color,
) -> rk_status {
    guard("rk_srtcm_mark_aware", || {
        // SAFETY: the caller's contract.
        let (marker, out) = unsafe { (handle(marker, "marker")?, Out::required(out_color, "out_color")?) };
        out.write(to_c(marker.marker.mark_aware(self::bytes(bytes)?, from_c(pre_color)?)));
        Ok(())
    })
}

/// The buckets' tokens now, in bytes: the committed bucket's (`Tc`) in
/// `*out_committed` and the excess bucket's (`Te`) in `*out_excess`.
///
/// Returns `RK_NULL_POINTER` when any argument is NULL.
///
/// # Safety
/// `marker` is NULL or a live marker; the out-parameters are NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_srtcm_tokens(
    marker: *const rk_srtcm,
    out_committed: *mut u64,
    out_excess: *mut u64,
) -> rk_status {
    guard("rk_srtcm_tokens", || {
        // SAFETY: the caller's contract.
        let (marker, committed, excess) = unsafe {
            (
                handle(marker, "marker")?,
                Out::required(out_committed, "out_committed")?,
                Out::required(out_excess, "out_excess")?,
            )
        };
        let (c, e) = marker.marker.tokens();
        committed.write(c);
        excess.write(e);
        Ok(())
    })
}

/// Creates a trTCM (RFC 2698) in `*out_marker`; free it with
/// `rk_trtcm_free()`. `clock`: a manual clock, or NULL for the monotonic
/// clock.
///
/// Returns `RK_INVALID_ARGUMENT` when a rate or burst is not positive or
/// `pir` is below `cir`; `RK_NULL_POINTER` when `out_marker` is NULL.
///
/// # Safety
/// `clock` is NULL or a live clock; `out_marker` is NULL or valid for
/// writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_trtcm_new(
    pir: i64,
    pbs: i64,
    cir: i64,
    cbs: i64,
    clock: *const rk_manual_clock,
    out_marker: *mut *mut rk_trtcm,
) -> rk_status {
    guard("rk_trtcm_new", || {
        // SAFETY: the caller's contract.
        let (clock, out) = unsafe { (clock.as_ref(), Out::required(out_marker, "out_marker")?) };
        let (pir, pbs, cir, cbs) = (
            unsigned_from_i64(Argument::Pir, pir)?,
            unsigned_from_i64(Argument::Pbs, pbs)?,
            unsigned_from_i64(Argument::Cir, cir)?,
            unsigned_from_i64(Argument::Cbs, cbs)?,
        );
        let marker = TrTcm::with_clock(pir, pbs, cir, cbs, rk_manual_clock::any_clock(clock))?;
        out.write(Box::into_raw(Box::new(rk_trtcm { marker })));
        Ok(())
    })
}

/// Frees a trTCM. `NULL` does nothing.
///
/// # Safety
/// `marker` is NULL or a marker from `rk_trtcm_new()` that has not been
/// freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_trtcm_free(marker: *mut rk_trtcm) {
    // SAFETY: the caller's contract: NULL or a live box from rk_trtcm_new that
    // no other call is using.
    unsafe { free_box("rk_trtcm_free", marker) }
}

/// Marks a packet of `bytes` now, colour-blind (RFC 2698 §3), in
/// `*out_color`.
///
/// Returns `RK_INVALID_ARGUMENT`, marking nothing, when `bytes` is
/// negative; `RK_NULL_POINTER` when `marker` or `out_color` is NULL.
///
/// # Safety
/// `marker` is NULL or a live marker; `out_color` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_trtcm_mark(marker: *const rk_trtcm, bytes: i64, out_color: *mut rk_color) -> rk_status {
    guard("rk_trtcm_mark", || {
        // SAFETY: the caller's contract.
        let (marker, out) = unsafe { (handle(marker, "marker")?, Out::required(out_color, "out_color")?) };
        out.write(to_c(marker.marker.mark(self::bytes(bytes)?)));
        Ok(())
    })
}

/// Marks a packet of `bytes` that arrives coloured `pre_color`,
/// colour-aware (RFC 2698 §3): a colour is never improved.
///
/// Returns `RK_INVALID_ARGUMENT`, marking nothing, when `bytes` is
/// negative or `pre_color` is not an `RK_COLOR_*`; `RK_NULL_POINTER` when
/// `marker` or `out_color` is NULL.
///
/// # Safety
/// As `rk_trtcm_mark()`.
#[no_mangle]
pub unsafe extern "C" fn rk_trtcm_mark_aware(
    marker: *const rk_trtcm,
    bytes: i64,
    pre_color: rk_color,
    out_color: *mut rk_color,
) -> rk_status {
    guard("rk_trtcm_mark_aware", || {
        // SAFETY: the caller's contract.
        let (marker, out) = unsafe { (handle(marker, "marker")?, Out::required(out_color, "out_color")?) };
        out.write(to_c(marker.marker.mark_aware(self::bytes(bytes)?, from_c(pre_color)?)));
        Ok(())
    })
}

/// The buckets' tokens now, in bytes: the peak bucket's (`Tp`) in
/// `*out_peak` and the committed bucket's (`Tc`) in `*out_committed`.
///
/// Returns `RK_NULL_POINTER` when any argument is NULL.
///
/// # Safety
/// `marker` is NULL or a live marker; the out-parameters are NULL or valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn rk_trtcm_tokens(
    marker: *const rk_trtcm,
    out_peak: *mut u64,
    out_committed: *mut u64,
) -> rk_status {
    guard("rk_trtcm_tokens", || {
        // SAFETY: the caller's contract.
        let (marker, peak, committed) = unsafe {
            (
                handle(marker, "marker")?,
                Out::required(out_peak, "out_peak")?,
                Out::required(out_committed, "out_committed")?,
            )
        };
        let (p, c) = marker.marker.tokens();
        peak.write(p);
        committed.write(c);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_round_trip_and_unknown_ones_are_refused() {
        for color in [Color::Green, Color::Yellow, Color::Red] {
            assert_eq!(from_c(to_c(color)).unwrap(), color);
            // SAFETY: a static NUL-terminated string.
            let name = unsafe { core::ffi::CStr::from_ptr(rk_color_name(to_c(color))) };
            assert_eq!(name.to_str().unwrap(), color.name());
        }
        assert_eq!(from_c(3).unwrap_err().argument(), Some("pre_color"));
        assert!(rk_color_name(3).is_null());
    }
}
