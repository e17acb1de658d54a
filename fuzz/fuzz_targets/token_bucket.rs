#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::token_bucket::Input| ratekeeper_fuzz::token_bucket::run(input));
