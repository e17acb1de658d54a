#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::gcra::Input| ratekeeper_fuzz::gcra::run(input));
