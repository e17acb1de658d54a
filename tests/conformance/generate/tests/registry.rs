//! The conformance suite against ratekeeper-core's registry of the
//! algorithms: every registered algorithm has vectors, written with its
//! parameters' wire names, and FORMAT.md names it and its fields. (The
//! runners of every language replay those vectors: a runner that does not
//! know an algorithm fails its cases.)

use std::path::Path;

use ratekeeper_core::{Algorithm, ParameterKind};
use serde_json::Value;

/// Every `limiter` object of the generated vectors, a composite's parts
/// included.
fn limiters() -> Vec<Value> {
    let mut all = Vec::new();
    for file in ratekeeper_vectors::all_files() {
        for case in file.cases {
            let limiter = case["limiter"].clone();
            if let Some(parts) = limiter.get("limits").and_then(Value::as_array) {
                all.extend(parts.iter().cloned());
            }
            all.push(limiter);
        }
    }
    all
}

#[test]
fn every_algorithm_has_vectors_with_its_parameters() {
    let limiters = limiters();
    for algorithm in Algorithm::ALL {
        let mine: Vec<&Value> = limiters.iter().filter(|l| l["algorithm"] == algorithm.wire_name()).collect();
        assert!(!mine.is_empty(), "no vector of {algorithm}");
        let wire_names: Vec<&str> = algorithm.parameters().iter().map(|p| p.wire_name()).collect();
        let mut all_given = false;
        for limiter in mine {
            let fields: Vec<&str> =
                limiter.as_object().unwrap().keys().map(String::as_str).filter(|k| *k != "algorithm").collect();
            for field in &fields {
                let known = algorithm.parameters().iter().any(|p| {
                    *field == p.wire_name()
                        || (p.kind() == ParameterKind::Duration && *field == format!("{}_seconds", p.name()))
                });
                assert!(known, "{algorithm}: field {field} is no parameter of the registry's: {limiter}");
            }
            all_given |= fields == wire_names;
        }
        assert!(all_given, "{algorithm}: no vector gives exactly {wire_names:?}, in that order");
    }
}

#[test]
fn the_format_documents_every_algorithm_and_its_fields() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../FORMAT.md");
    let format = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for algorithm in Algorithm::ALL {
        assert!(format.contains(&format!("`{algorithm}`")), "FORMAT.md does not name `{algorithm}`");
        for parameter in algorithm.parameters() {
            let field = format!("`{}`", parameter.wire_name());
            assert!(format.contains(&field), "FORMAT.md does not name {algorithm}'s field {field}");
        }
    }
}
