/*
 * ratekeeper from C: an HTTP API's limits. A token bucket answers each
 * request with an rk_decision, which becomes the RateLimit,
 * RateLimit-Policy and Retry-After fields; a concurrency limiter bounds the
 * requests in flight with permits that must be released.
 *
 * After `make install PREFIX=...` (see the README), build it anywhere with
 *   cc -std=c11 http_limits.c $(pkg-config --cflags --libs ratekeeper) -o http_limits
 * In the repository, `make -C examples/c run` builds and runs it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ratekeeper.h>

static void check(rk_status status, const char *what) {
  if (status != RK_OK) {
    fprintf(stderr, "%s failed: %s\n", what, rk_last_error_message());
    exit(1);
  }
}

int main(void) {
  /* 5 requests per second, bursts of 3 (Go's rate.NewLimiter(5, 3)), on
   * the system's monotonic clock. Any algorithm works the same way:
   * rk_limiter_new_gcra(), rk_limiter_new_fixed_window(), ... or
   * rk_limiter_new() with an rk_limiter_spec. */
  rk_limiter *limiter = NULL;
  check(rk_limiter_new_token_bucket(5.0, 3, NULL, &limiter), "rk_limiter_new_token_bucket");

  for (int request = 1; request <= 5; request++) {
    rk_decision d;
    check(rk_limiter_check(limiter, 1, &d), "rk_limiter_check"); /* never waits; a refusal takes nothing */
    char ratelimit[128], policy[128], retry_after[32];
    size_t len;
    check(rk_decision_write_ratelimit(&d, "api", ratelimit, sizeof ratelimit, &len), "RateLimit");
    check(rk_decision_write_ratelimit_policy(&d, "api", policy, sizeof policy, &len), "RateLimit-Policy");
    check(rk_decision_write_retry_after(&d, retry_after, sizeof retry_after, &len), "Retry-After");
    printf("request %d: %d  RateLimit: %s  RateLimit-Policy: %s", request, d.allowed ? 200 : 429, ratelimit, policy);
    if (len > 0) printf("  Retry-After: %s", retry_after); /* empty: send no Retry-After */
    printf("\n");
  }

  /* At most 2 requests in flight. A permit is released exactly once, with
   * how the request went; one never released is a leak valgrind reports. */
  rk_concurrency_limiter *in_flight = NULL;
  check(rk_concurrency_limiter_new_fixed(2, NULL, &in_flight), "rk_concurrency_limiter_new_fixed");
  rk_permit *first = NULL, *second = NULL, *third = NULL;
  check(rk_concurrency_limiter_try_acquire(in_flight, NULL, &first), "try_acquire");
  check(rk_concurrency_limiter_try_acquire(in_flight, NULL, &second), "try_acquire");
  check(rk_concurrency_limiter_try_acquire(in_flight, NULL, &third), "try_acquire");
  printf("in flight: first %s, second %s, third %s\n", first ? "admitted" : "refused",
         second ? "admitted" : "refused", third ? "admitted" : "refused (503)");
  check(rk_permit_release(first, RK_OUTCOME_SUCCESS, NULL), "rk_permit_release");
  check(rk_permit_release(second, RK_OUTCOME_DROPPED, NULL), "rk_permit_release");

  rk_concurrency_limiter_free(in_flight);
  rk_limiter_free(limiter);
  return 0;
}
