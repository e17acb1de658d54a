//! The library's version, twice: at compile time as the header's
//! `RK_VERSION_*` macros (cbindgen turns these constants into `#define`s),
//! and at run time as [`rk_version`]. A program compiled against one header
//! and run against another `libratekeeper.so` can tell the two apart by
//! comparing them.
//!
//! The constants are literals because cbindgen copies literals, not what
//! `env!` would give; the assertion below ties them to the crate's version
//! (the workspace's, the one source of every version), so a version bump
//! that forgets them does not compile.

/// The major version of the header: `X` of `X.Y.Z`. (A program can compare
/// it with rk_version(), the library's, which may be another build.)
pub const RK_VERSION_MAJOR: u32 = 0;
/// The minor version of the header: `Y` of `X.Y.Z`. While the major version
/// is 0, a new minor version may break the API (as semver allows), which is
/// why the shared library's soname carries it: `libratekeeper.so.0.Y`.
pub const RK_VERSION_MINOR: u32 = 1;
/// The patch version of the header: `Z` of `X.Y.Z`.
pub const RK_VERSION_PATCH: u32 = 0;
/// The header's version as one number for `#if`:
/// `MAJOR * 1000000 + MINOR * 1000 + PATCH` (0.1.0 is 1000, 1.2.3 is
/// 1002003), so `#if RK_VERSION_NUMBER >= 1000` means "0.1.0 or newer".
pub const RK_VERSION_NUMBER: u32 = RK_VERSION_MAJOR * 1000000 + RK_VERSION_MINOR * 1000 + RK_VERSION_PATCH;

/// A decimal version component as cargo gives it (`CARGO_PKG_VERSION_*`),
/// at compile time.
const fn component(digits: &str) -> u32 {
    let bytes = digits.as_bytes();
    assert!(!bytes.is_empty(), "an empty version component");
    let mut value: u32 = 0;
    let mut i = 0;
    while i < bytes.len() {
        assert!(bytes[i].is_ascii_digit(), "a version component that is not a number");
        value = value * 10 + (bytes[i] - b'0') as u32;
        i += 1;
    }
    value
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

// The header's version is the crate's. (The fuzz workspace compiles these
// sources as a package of its own, versioned 0.0.0: the check is for the
// library, `ratekeeper-c`, only.) MINOR and PATCH below 1000 keep
// RK_VERSION_NUMBER's digits apart.
/// cbindgen:ignore
const _: () = assert!(
    !same(env!("CARGO_PKG_NAME"), "ratekeeper-c")
        || (RK_VERSION_MAJOR == component(env!("CARGO_PKG_VERSION_MAJOR"))
            && RK_VERSION_MINOR == component(env!("CARGO_PKG_VERSION_MINOR"))
            && RK_VERSION_PATCH == component(env!("CARGO_PKG_VERSION_PATCH"))),
    "RK_VERSION_MAJOR/MINOR/PATCH (bindings/c/src/version.rs) differ from the crate's version: set them and regenerate include/ratekeeper.h"
);
/// cbindgen:ignore
const _: () = assert!(RK_VERSION_MINOR < 1000 && RK_VERSION_PATCH < 1000);

/// The library's version, e.g. `"0.1.0"`: the Rust crates' version, which
/// the pkg-config file carries too (`pkg-config --modversion ratekeeper`).
/// The header's RK_VERSION_MAJOR, _MINOR and _PATCH are the version the
/// program was compiled against; this is the library it runs with.
///
/// Never fails; the string is static.
#[no_mangle]
pub extern "C" fn rk_version() -> *const core::ffi::c_char {
    // A constant, which cannot panic; inside the boundary all the same.
    std::panic::catch_unwind(|| concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()).unwrap_or(c"".as_ptr())
}
