#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::windows::Input| ratekeeper_fuzz::windows::run_sliding(input));
