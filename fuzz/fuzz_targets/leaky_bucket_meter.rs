#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::leaky::MeterInput| ratekeeper_fuzz::leaky::run_meter(input));
