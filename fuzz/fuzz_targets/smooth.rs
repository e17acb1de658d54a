#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::smooth::Input| ratekeeper_fuzz::smooth::run(input));
