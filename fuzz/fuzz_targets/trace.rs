#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::trace::Input| ratekeeper_fuzz::trace::run(input));
