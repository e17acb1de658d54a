#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::markers::TrInput| ratekeeper_fuzz::markers::run_trtcm(input));
