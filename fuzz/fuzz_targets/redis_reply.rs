#![no_main]
// The target checks the largest allocation a read makes (src/redis_reply.rs).
#[global_allocator]
static ALLOCATOR: ratekeeper_fuzz::redis_reply::Watching = ratekeeper_fuzz::redis_reply::Watching;
libfuzzer_sys::fuzz_target!(|input: ratekeeper_fuzz::redis_reply::Input| ratekeeper_fuzz::redis_reply::run(input));
