#![no_main]
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::leaky::QueueInput| ratekeeper_fuzz::leaky::run_queue(input));
