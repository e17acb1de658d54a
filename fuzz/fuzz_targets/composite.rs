#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::composite::Input| ratekeeper_fuzz::composite::run(input));
