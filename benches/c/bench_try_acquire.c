/*
 * rk_rate_limiter_try_acquire() through the C ABI: what a C caller pays for
 * one decision, for the report beside the Rust figure of the same run
 * (benches/rust/benches/ratios.rs measures RateLimiter::try_acquire).
 *
 *   make -C benches/c run [ARGS="--quick"]      (scripts/bench.sh runs it)
 *
 * Two workloads, as everywhere in benches/: every call admitted (1e9
 * permits per second) and every call refused (one permit per 1000 s,
 * taken). Rounds alternate the two; each round times enough calls for
 * about 20 ms; the figure is the median round. Prints the results in the
 * ratekeeper-bench/1 JSON format on standard output.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdbool.h>
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

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* ns per call of `calls` try_acquire(1) calls; exits if any answer differs
 * from `expected`. */
static double time_calls(const rk_rate_limiter *limiter, long calls, bool expected) {
  long wrong = 0;
  double start = now_ns();
  for (long i = 0; i < calls; i++) {
    bool acquired = !expected;
    rk_rate_limiter_try_acquire(limiter, 1, 0, &acquired);
    wrong += acquired != expected;
  }
  double ns = (now_ns() - start) / (double)calls;
  if (wrong != 0) {
    fprintf(stderr, "%ld of %ld calls were not %s\n", wrong, calls, expected ? "admitted" : "refused");
    exit(1);
  }
  return ns;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int rounds = (argc > 1 && strcmp(argv[1], "--quick") == 0) ? 5 : 31;
  rk_rate_limiter *admitting = NULL, *refusing = NULL;
  check(rk_rate_limiter_new_bursty(1e9, RK_DEFAULT_MAX_BURST_SECONDS, NULL, &admitting), "create");
  check(rk_rate_limiter_new_bursty(1e-3, RK_DEFAULT_MAX_BURST_SECONDS, NULL, &refusing), "create");
  bool first = false;
  check(rk_rate_limiter_try_acquire(refusing, 1, 0, &first), "try_acquire");
  if (!first) {
    fprintf(stderr, "the first call must be admitted\n");
    return 1;
  }
  const rk_rate_limiter *limiters[2] = {admitting, refusing};
  const bool expected[2] = {true, false};
  const char *workloads[2] = {"every call admitted, 1 thread", "every call refused, 1 thread"};
  long calls[2];
  double samples[2][64];
  for (int w = 0; w < 2; w++) {
    /* Calibrate: about 20 ms a round. */
    double probe = time_calls(limiters[w], 200000, expected[w]);
    calls[w] = (long)(20e6 / probe);
    if (calls[w] < 10000) calls[w] = 10000;
  }
  for (int r = 0; r < rounds; r++) {
    for (int w = 0; w < 2; w++) samples[w][r] = time_calls(limiters[w], calls[w], expected[w]);
  }
  printf("{\"format\": \"ratekeeper-bench/1\", \"suite\": \"c\", "
         "\"title\": \"C: rk_rate_limiter_try_acquire() through the C ABI\", "
         "\"command\": \"make -C benches/c run\", "
         "\"notes\": \"libratekeeper.a (release), called from C compiled with -O2; median of %d rounds of about 20 ms.\", "
         "\"tables\": [{\"title\": \"ns per call\", \"unit\": \"ns\", \"reference\": \"ratekeeper (C ABI)\", \"rows\": [",
         rounds);
  for (int w = 0; w < 2; w++) {
    qsort(samples[w], (size_t)rounds, sizeof(double), by_value);
    printf("%s{\"workload\": \"%s\", \"contender\": \"ratekeeper (C ABI)\", \"value\": %.3f}", w ? ", " : "",
           workloads[w], samples[w][rounds / 2]);
  }
  printf("]}]}\n");
  rk_rate_limiter_free(admitting);
  rk_rate_limiter_free(refusing);
  return 0;
}
