//! `ratekeeper-conformance PATH...`: replays vector files (or directories of
//! them) against the Rust crates. Prints one line per failing case and a last
//! line `N passed, N failed` (and `, N skipped` when some cases do not apply
//! to Rust); exits 1 when any case fails, 2 on unreadable input. Normally run
//! through `tests/conformance/run rust`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let paths: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    if paths.is_empty() {
        eprintln!("usage: ratekeeper-conformance PATH...");
        return ExitCode::from(2);
    }
    let files = match ratekeeper_conformance::collect_files(&paths) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (mut passed, mut failed, mut skipped, mut unreadable) = (0u64, 0u64, 0u64, false);
    for file in files {
        match ratekeeper_conformance::run_file(&file) {
            Ok(outcomes) => {
                for outcome in outcomes {
                    match outcome.failure {
                        None if outcome.skipped.is_some() => skipped += 1,
                        None => passed += 1,
                        Some(failure) => {
                            failed += 1;
                            println!("FAIL {}: {}: {failure}", file.display(), outcome.name);
                        }
                    }
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                unreadable = true;
            }
        }
    }
    if skipped > 0 {
        println!("{passed} passed, {failed} failed, {skipped} skipped");
    } else {
        println!("{passed} passed, {failed} failed");
    }
    if unreadable {
        ExitCode::from(2)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
