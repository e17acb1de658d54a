//! Gives `libratekeeper.so` its soname, from the crate's version, so that a
//! program linked against it records the version it can run with rather
//! than whatever `libratekeeper.so` is installed later.
//!
//! The rule is semver's, as cargo-c applies it: from 1.0.0 a major version
//! is the compatibility line (`libratekeeper.so.1`); while the version is
//! 0.x every minor version may break, so the minor goes into the name too
//! (`libratekeeper.so.0.1`). `make install` (bindings/c/install.mk) names
//! the real file `libratekeeper.so.X.Y.Z` and links the soname and the
//! plain `libratekeeper.so` to it; bindings/c/c.mk computes the same name,
//! and tests/installed/c.sh checks the library's against it.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("cargo sets CARGO_PKG_VERSION_MAJOR");
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("cargo sets CARGO_PKG_VERSION_MINOR");
    let soname = if major == "0" { format!("libratekeeper.so.0.{minor}") } else { format!("libratekeeper.so.{major}") };
    // ELF systems, whose linkers take -soname. (macOS's dylibs carry an
    // install name instead, and Windows' DLLs neither: they keep the name
    // cargo gives them.)
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(target_os.as_str(), "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly") {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
}
