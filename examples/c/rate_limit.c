/*
 * ratekeeper from C: Guava's RateLimiter at 5 permits per second.
 *
 * After `make install PREFIX=...` (see the README), build it anywhere with
 *   cc -std=c11 rate_limit.c $(pkg-config --cflags --libs ratekeeper) -o rate_limit
 * In the repository, `make -C examples/c run` builds and runs it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ratekeeper.h>

/* Every rk_ call returns a status; on failure the library says why. */
static void check(rk_status status, const char *what) {
  if (status != RK_OK) {
    fprintf(stderr, "%s failed: %s\n", what, rk_last_error_message());
    exit(1);
  }
}

int main(void) {
  rk_rate_limiter *limiter = NULL;
  /* RateLimiter.create(5.0): 5 permits per second, 1 s of burst, on the
   * system's monotonic clock (NULL: no manual clock). */
  check(rk_rate_limiter_new_bursty(5.0, RK_DEFAULT_MAX_BURST_SECONDS, NULL, &limiter), "create");

  for (int task = 1; task <= 4; task++) {
    double waited = 0.0;
    check(rk_rate_limiter_acquire(limiter, 1, &waited), "acquire"); /* sleeps as needed */
    printf("task %d ran after waiting %.1f s\n", task, waited);
  }

  bool acquired = false;
  check(rk_rate_limiter_try_acquire(limiter, 1, 0, &acquired), "try_acquire"); /* never waits */
  printf("try_acquire right away: %s\n", acquired ? "acquired" : "refused, try later");

  /* A bad argument is an error status naming it; the limiter is unchanged. */
  rk_status status = rk_rate_limiter_set_rate(limiter, -1.0);
  printf("set_rate(-1.0): %s, argument %s\n  %s\n", rk_status_message(status), rk_last_error_argument(),
         rk_last_error_message());

  rk_rate_limiter_free(limiter);
  return 0;
}
