//! The checked-in vectors must be exactly what the generator writes now: a
//! change to an algorithm that moves any expected value fails here until the
//! vectors are regenerated (`cargo run -p ratekeeper-vectors`) and the
//! change is reviewed in the diff of the JSON.

use std::path::Path;

#[test]
fn checked_in_vectors_are_fresh() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").join(ratekeeper_vectors::VECTORS_DIR);
    for file in ratekeeper_vectors::all_files() {
        let path = dir.join(file.name);
        let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            on_disk == ratekeeper_vectors::render(&file),
            "{} is stale: run `cargo run -p ratekeeper-vectors` and review the diff",
            path.display()
        );
    }
}

#[test]
fn checked_in_registry_is_fresh() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").join(ratekeeper_vectors::REGISTRY_FILE);
    let on_disk = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(
        on_disk == ratekeeper_vectors::registry(),
        "{} is stale: run `cargo run -p ratekeeper-vectors` and review the diff",
        path.display()
    );
}

#[test]
fn every_file_in_the_directory_is_generated() {
    // A file left behind by a renamed generator would be replayed forever.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").join(ratekeeper_vectors::VECTORS_DIR);
    let generated: Vec<&str> = ratekeeper_vectors::all_files().iter().map(|f| f.name).collect();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(generated.contains(&name.as_str()), "{name} in {} is not generated", dir.display());
    }
}

#[test]
fn case_names_are_unique() {
    let mut names = std::collections::HashSet::new();
    for file in ratekeeper_vectors::all_files() {
        for case in &file.cases {
            let name = case["name"].as_str().unwrap().to_owned();
            assert!(names.insert(name.clone()), "duplicate case name {name}");
        }
    }
}
