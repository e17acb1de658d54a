/*
 * Guava's documented scenario, as the demo runs it in every language: a
 * limiter of 1 permit per second asked for 1, 2, 3, 4 and 5 permits, on a
 * manual clock the program moves in step with real time:
 * rk_rate_limiter_acquire() returns the wait at once (moving the manual
 * clock by it), then the program sleeps that long for real. Prints
 * `acquire(N) waited W slept S` per request (seconds, six places);
 * `--no-sleep` skips the real sleeps.
 *
 *   make -C examples/c guava-scenario
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ratekeeper.h>

static void check(rk_status status, const char *what) {
  if (status != RK_OK) {
    fprintf(stderr, "%s failed: %s\n", what, rk_last_error_message());
    exit(1);
  }
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
  int sleep = !(argc > 1 && strcmp(argv[1], "--no-sleep") == 0);
  rk_manual_clock *clock = NULL;
  rk_rate_limiter *limiter = NULL;
  check(rk_manual_clock_new(&clock), "rk_manual_clock_new");
  check(rk_rate_limiter_new_bursty(1.0, RK_DEFAULT_MAX_BURST_SECONDS, clock, &limiter), "rk_rate_limiter_new_bursty");
  for (int permits = 1; permits <= 5; permits++) {
    double waited = 0.0;
    check(rk_rate_limiter_acquire(limiter, permits, &waited), "rk_rate_limiter_acquire");
    double before = now_seconds();
    if (sleep && waited > 0.0) {
      struct timespec t = {(time_t)waited, (long)((waited - (double)(time_t)waited) * 1e9)};
      while (nanosleep(&t, &t) != 0) {
      }
    }
    printf("acquire(%d) waited %.6f slept %.6f\n", permits, waited, now_seconds() - before);
    fflush(stdout);
  }
  int64_t micros = 0;
  check(rk_manual_clock_now_micros(clock, &micros), "rk_manual_clock_now_micros");
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
  if (micros != 10000000) {
    fprintf(stderr, "the manual clock is at %lld us, not 10 s\n", (long long)micros);
    return 1;
  }
  return 0;
}
