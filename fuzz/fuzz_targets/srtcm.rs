#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::markers::SrInput| ratekeeper_fuzz::markers::run_srtcm(input));
