#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::c_abi::Input| ratekeeper_fuzz::c_abi::run(input));
