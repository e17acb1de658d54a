/*
 * Unit tests of the C API's rate limiter and manual clock: Guava's own
 * examples, on a manual clock, to the microsecond; then the real clock.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

/* A manual clock and a bursty limiter on it. */
static rk_rate_limiter *bursty_on(rk_manual_clock *clock, double rate, double max_burst_seconds) {
  rk_rate_limiter *limiter = NULL;
  CHECK_OK(rk_rate_limiter_new_bursty(rate, max_burst_seconds, clock, &limiter));
  if (limiter == NULL) {
    fprintf(stderr, "cannot go on without a limiter\n");
    exit(1);
  }
  return limiter;
}

static rk_manual_clock *new_clock(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  if (clock == NULL) {
    fprintf(stderr, "cannot go on without a clock\n");
    exit(1);
  }
  return clock;
}

static int64_t now_micros(const rk_manual_clock *clock) {
  int64_t now = -1;
  CHECK_OK(rk_manual_clock_now_micros(clock, &now));
  return now;
}

static int64_t acquire_micros(const rk_rate_limiter *limiter, int64_t permits) {
  int64_t waited = -1;
  CHECK_OK(rk_rate_limiter_acquire_micros(limiter, permits, &waited));
  return waited;
}

static bool try_acquire(const rk_rate_limiter *limiter, int64_t permits, int64_t timeout_micros) {
  bool acquired = false;
  CHECK_OK(rk_rate_limiter_try_acquire(limiter, permits, timeout_micros, &acquired));
  return acquired;
}

static int64_t time_until_available(const rk_rate_limiter *limiter) {
  int64_t micros = -1;
  CHECK_OK(rk_rate_limiter_time_until_available(limiter, 1, &micros));
  return micros;
}

/* Guava's documented example: RateLimiter.create(1.0), acquire(1..5). */
static void guava_documented_example(void) {
  rk_manual_clock *clock = new_clock();
  rk_rate_limiter *limiter = bursty_on(clock, 1.0, RK_DEFAULT_MAX_BURST_SECONDS);
  for (int64_t permits = 1; permits <= 5; permits++) {
    double waited = -1.0;
    CHECK_OK(rk_rate_limiter_acquire(limiter, permits, &waited));
    CHECK_DOUBLE(waited, (double)(permits - 1));
  }
  /* Sleeping on a manual clock advanced it by the waits: 0+1+2+3+4 s. */
  CHECK_I64(now_micros(clock), 10000000);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* Guava's RateLimiterTest.testSimpleWithWait and testBurstyAndUpdate. */
static void guava_bursty_tests(void) {
  rk_manual_clock *clock = new_clock();
  rk_rate_limiter *limiter = bursty_on(clock, 5.0, 1.0);
  CHECK_I64(acquire_micros(limiter, 1), 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 200000));
  CHECK_I64(acquire_micros(limiter, 1), 0);
  CHECK_I64(acquire_micros(limiter, 1), 200000);
  rk_rate_limiter_free(limiter);

  limiter = bursty_on(clock, 1.0, 1.0);
  CHECK_I64(acquire_micros(limiter, 1), 0);
  CHECK_I64(acquire_micros(limiter, 1), 1000000);
  CHECK_OK(rk_rate_limiter_set_rate(limiter, 2.0));
  double rate = 0.0;
  CHECK_OK(rk_rate_limiter_get_rate(limiter, &rate));
  CHECK_DOUBLE(rate, 2.0);
  /* The next request still pays for the previous one at the old rate. */
  CHECK_I64(acquire_micros(limiter, 1), 1000000);
  CHECK_I64(acquire_micros(limiter, 2), 500000);
  CHECK_I64(acquire_micros(limiter, 4), 1000000);
  CHECK_I64(acquire_micros(limiter, 1), 2000000);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* Guava's RateLimiterTest.testWarmUp: create(2.0, 4 s). A cold limiter
 * starts at 3 times the stable interval of 0.5 s and speeds up. */
static void guava_warming_up_test(void) {
  rk_manual_clock *clock = new_clock();
  rk_rate_limiter *limiter = NULL;
  CHECK_OK(rk_rate_limiter_new_warming_up(2.0, 4000000, RK_DEFAULT_COLD_FACTOR, clock, &limiter));
  const int64_t expected[] = {0, 1375000, 1125000, 875000, 625000, 500000, 500000, 500000};
  for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    CHECK_I64(acquire_micros(limiter, 1), expected[i]);
  }
  /* Idle for the whole warm-up: cold again. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 4500000));
  CHECK_I64(acquire_micros(limiter, 1), 0);
  CHECK_I64(acquire_micros(limiter, 1), 1375000);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* try_acquire's timeout, can_acquire and time_until_available, which take
 * nothing, and reserve, which takes without waiting. */
static void timeouts_and_queries(void) {
  rk_manual_clock *clock = new_clock();
  rk_rate_limiter *limiter = bursty_on(clock, 5.0, 1.0);
  CHECK(try_acquire(limiter, 1, 0));
  /* The next permit is 200 ms away. */
  CHECK_I64(time_until_available(limiter), 200000);
  CHECK(!try_acquire(limiter, 1, 199999));
  CHECK(!try_acquire(limiter, 1, -1)); /* negative: do not wait, as Guava */
  CHECK(!try_acquire(limiter, 1, INT64_MIN));
  bool can = true;
  CHECK_OK(rk_rate_limiter_can_acquire(limiter, 1, 199999, &can));
  CHECK(!can);
  CHECK_OK(rk_rate_limiter_can_acquire(limiter, 1, 200000, &can));
  CHECK(can);
  /* Refusals and queries took nothing and did not move the clock. */
  CHECK_I64(now_micros(clock), 0);
  CHECK(try_acquire(limiter, 3, 200000));
  CHECK_I64(now_micros(clock), 200000); /* it "slept" until its turn */
  /* The 3 permits are paid by the next request: 600 ms. */
  CHECK_I64(time_until_available(limiter), 600000);
  int64_t wait = -1;
  CHECK_OK(rk_rate_limiter_reserve(limiter, 1, &wait));
  CHECK_I64(wait, 600000);
  CHECK_I64(now_micros(clock), 200000); /* reserve does not wait */
  CHECK_I64(time_until_available(limiter), 800000);
  CHECK(try_acquire(limiter, 1, INT64_MAX));
  CHECK_I64(now_micros(clock), 1000000);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* The seconds acquire reports are Guava's: the microseconds / 1e6. */
static void acquire_reports_guavas_seconds(void) {
  /* Two identical limiters, each on its own clock. */
  rk_manual_clock *clock_a = new_clock(), *clock_b = new_clock();
  rk_rate_limiter *a = bursty_on(clock_a, 3.0, 0.0);
  rk_rate_limiter *b = bursty_on(clock_b, 3.0, 0.0);
  CHECK_OK(rk_rate_limiter_acquire(a, 1, NULL)); /* the wait may be ignored */
  CHECK_OK(rk_rate_limiter_acquire_micros(b, 1, NULL));
  double seconds = -1.0;
  CHECK_OK(rk_rate_limiter_acquire(a, 1, &seconds));
  int64_t micros = -1;
  CHECK_OK(rk_rate_limiter_acquire_micros(b, 1, &micros));
  /* Guava truncates 1e6 / 3 µs to whole microseconds. */
  CHECK_I64(micros, 333333);
  CHECK_DOUBLE(seconds, 333333 / 1e6);
  CHECK_I64(now_micros(clock_a), 333333);
  rk_rate_limiter_free(a);
  rk_rate_limiter_free(b);
  rk_manual_clock_free(clock_a);
  rk_manual_clock_free(clock_b);
}

/* Guava accepts an infinite rate: every request is granted at once. */
static void infinite_rate(void) {
  rk_manual_clock *clock = new_clock();
  rk_rate_limiter *limiter = bursty_on(clock, INFINITY, 1.0);
  double rate = 0.0;
  CHECK_OK(rk_rate_limiter_get_rate(limiter, &rate));
  CHECK(isinf(rate) && rate > 0);
  for (int i = 0; i < 3; i++) CHECK_I64(acquire_micros(limiter, INT32_MAX), 0);
  CHECK_I64(time_until_available(limiter), 0);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* The manual clock: moves only forward, saturates, is shared by every
 * limiter made with it, and outlives its handle while limiters use it. */
static void manual_clock(void) {
  rk_manual_clock *clock = new_clock();
  CHECK_I64(now_micros(clock), 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 5));
  CHECK_STATUS(rk_manual_clock_advance_micros(clock, -3), RK_INVALID_ARGUMENT); /* never backwards */
  CHECK_STR(rk_last_error_argument(), "micros");
  CHECK_OK(rk_manual_clock_advance_micros(clock, 0));
  CHECK_I64(now_micros(clock), 5);

  /* Two limiters on one clock: one's wait moves the other's time. */
  rk_rate_limiter *a = bursty_on(clock, 1.0, 1.0);
  rk_rate_limiter *b = bursty_on(clock, 1.0, 1.0);
  CHECK_I64(acquire_micros(b, 1), 0);
  CHECK_I64(time_until_available(b), 1000000);
  CHECK_I64(acquire_micros(a, 1), 0);
  CHECK_I64(acquire_micros(a, 1), 1000000);
  CHECK_I64(time_until_available(b), 0);

  /* The limiters keep the clock alive after its handle is freed. */
  rk_manual_clock_free(clock);
  CHECK_I64(acquire_micros(a, 1), 1000000);
  CHECK_I64(time_until_available(b), 0);
  rk_rate_limiter_free(a);
  /* b, idle for 2 s, saved up its 1 permit: the first is free, the next
   * is granted at once (Guava pre-consumes) and the third pays for it. */
  CHECK_I64(acquire_micros(b, 1), 0);
  CHECK_I64(acquire_micros(b, 1), 0);
  CHECK_I64(acquire_micros(b, 1), 1000000);
  rk_rate_limiter_free(b);

  /* Saturates at INT64_MAX. */
  clock = new_clock();
  CHECK_OK(rk_manual_clock_advance_micros(clock, INT64_MAX));
  CHECK_OK(rk_manual_clock_advance_micros(clock, INT64_MAX));
  CHECK_I64(now_micros(clock), INT64_MAX);
  rk_manual_clock_free(clock);
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Without a manual clock, acquire really sleeps. */
static void real_clock(void) {
  rk_rate_limiter *limiter = NULL;
  CHECK_OK(rk_rate_limiter_new_bursty(20.0, 1.0, NULL, &limiter));
  if (limiter == NULL) return;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  double first = -1.0, second = -1.0;
  CHECK_OK(rk_rate_limiter_acquire(limiter, 1, &first));
  CHECK_OK(rk_rate_limiter_acquire(limiter, 1, &second));
  double elapsed = seconds_since(&start);
  CHECK_DOUBLE(first, 0.0);
  /* The second waits for the rest of the first's 50 ms (less the time
   * between the two calls, which valgrind can stretch). */
  CHECK(second > 0.0 && second <= 0.05);
  CHECK(elapsed >= second - 0.001);
  bool acquired = true;
  CHECK_OK(rk_rate_limiter_try_acquire(limiter, 1, 0, &acquired));
  CHECK(!acquired);
  rk_rate_limiter_free(limiter);
}

/* The header's version macros work in #if, and name the library this test
 * runs against: the header and the library are one build. */
#if !defined(RK_VERSION_NUMBER) || RK_VERSION_NUMBER < 1000
#error "ratekeeper.h has no RK_VERSION_NUMBER, or one below 0.1.0's"
#endif

static void version_and_status_messages(void) {
  const char *version = rk_version();
  CHECK(version != NULL && version[0] >= '0' && version[0] <= '9' && strchr(version, '.') != NULL);
  char from_macros[64];
  int len = snprintf(from_macros, sizeof from_macros, "%d.%d.%d", RK_VERSION_MAJOR, RK_VERSION_MINOR, RK_VERSION_PATCH);
  CHECK(len > 0 && (size_t)len < sizeof from_macros);
  /* rk_version() is MAJOR.MINOR.PATCH, with a pre-release or build suffix
   * if the version has one. */
  CHECK(strncmp(version, from_macros, (size_t)len) == 0
        && (version[len] == '\0' || version[len] == '-' || version[len] == '+'));
  if (strncmp(version, from_macros, (size_t)len) != 0) {
    fprintf(stderr, "    the header says %s, rk_version() %s\n", from_macros, version);
  }
  CHECK(RK_VERSION_NUMBER == RK_VERSION_MAJOR * 1000000 + RK_VERSION_MINOR * 1000 + RK_VERSION_PATCH);
  CHECK_STR(rk_status_message(RK_OK), "ok");
  CHECK_STR(rk_status_message(RK_INVALID_ARGUMENT), "invalid argument");
  CHECK_STR(rk_status_message(RK_NULL_POINTER), "null pointer");
  CHECK_STR(rk_status_message(RK_PANIC), "internal error (a panic in ratekeeper)");
  CHECK_STR(rk_status_message(RK_OTHER_ERROR), "error");
  CHECK_STR(rk_status_message(12345), "unknown status");
}

int main(void) {
  guava_documented_example();
  guava_bursty_tests();
  guava_warming_up_test();
  timeouts_and_queries();
  acquire_reports_guavas_seconds();
  infinite_rate();
  manual_clock();
  real_clock();
  version_and_status_messages();
  return check_summary("test_rate_limiter");
}
