//! `ratekeeper-vectors [--check] [ROOT]`: writes the algorithm conformance
//! vectors into `ROOT/tests/conformance/vectors/algorithms/`, and the
//! registry of the algorithms into `ROOT/tests/conformance/algorithms.json`
//! (ROOT defaults to the repository this crate is in). With `--check` it writes nothing and
//! exits 1 if any file on disk differs from what it would write.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut check = false;
    let mut root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..");
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            "-h" | "--help" => {
                println!("usage: ratekeeper-vectors [--check] [ROOT]");
                return ExitCode::SUCCESS;
            }
            other => root = PathBuf::from(other),
        }
    }
    let root = root.canonicalize().unwrap_or(root);
    let dir = root.join(ratekeeper_vectors::VECTORS_DIR);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("error: {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    let mut stale = 0;
    for file in ratekeeper_vectors::all_files() {
        let path = dir.join(file.name);
        let text = ratekeeper_vectors::render(&file);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == text {
            println!("{}: {} cases, up to date", path.display(), file.cases.len());
        } else if check {
            println!("{}: stale (run `cargo run -p ratekeeper-vectors`)", path.display());
            stale += 1;
        } else if let Err(e) = std::fs::write(&path, text) {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        } else {
            println!("{}: {} cases, written", path.display(), file.cases.len());
        }
    }
    let path = root.join(ratekeeper_vectors::REGISTRY_FILE);
    let text = ratekeeper_vectors::registry();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == text {
        println!("{}: {} algorithms, up to date", path.display(), ratekeeper_core::Algorithm::ALL.len());
    } else if check {
        println!("{}: stale (run `cargo run -p ratekeeper-vectors`)", path.display());
        stale += 1;
    } else if let Err(e) = std::fs::write(&path, text) {
        eprintln!("error: {}: {e}", path.display());
        return ExitCode::from(2);
    } else {
        println!("{}: {} algorithms, written", path.display(), ratekeeper_core::Algorithm::ALL.len());
    }
    if stale > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
