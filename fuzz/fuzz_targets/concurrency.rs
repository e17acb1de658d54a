#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::concurrency::Input| ratekeeper_fuzz::concurrency::run(input));
