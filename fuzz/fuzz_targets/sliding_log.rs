#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::windows::SlidingLogInput| ratekeeper_fuzz::windows::run_log(
    input
));
