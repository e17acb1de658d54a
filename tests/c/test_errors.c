/*
 * NULL and invalid arguments: every function reports them with its status,
 * names the argument in rk_last_error_argument() and the value in
 * rk_last_error_message(), writes no out-parameter, and changes nothing.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "check.h"

/* The call must fail with `status`, naming `argument`. */
#define CHECK_FAILS(call, status, argument)        \
  do {                                             \
    CHECK_STATUS(call, status);                    \
    CHECK_STR(rk_last_error_argument(), argument); \
  } while (0)

static rk_manual_clock *clock_;
static rk_rate_limiter *limiter_;

/* Sentinels: a failing call must leave them as they are. */
#define UNTOUCHED_I64 INT64_C(-777)
#define UNTOUCHED_DOUBLE -777.0

static void null_handles(void) {
  int64_t i = UNTOUCHED_I64;
  double d = UNTOUCHED_DOUBLE;
  bool b = true;
  CHECK_FAILS(rk_rate_limiter_acquire(NULL, 1, &d), RK_NULL_POINTER, "limiter");
  CHECK_STR(rk_last_error_message(), "rk_rate_limiter_acquire: limiter is NULL");
  CHECK_FAILS(rk_rate_limiter_acquire_micros(NULL, 1, &i), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_try_acquire(NULL, 1, 0, &b), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_reserve(NULL, 1, &i), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_set_rate(NULL, 1.0), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_get_rate(NULL, &d), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_time_until_available(NULL, 1, &i), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_rate_limiter_can_acquire(NULL, 1, 0, &b), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_manual_clock_advance_micros(NULL, 1), RK_NULL_POINTER, "clock");
  CHECK_FAILS(rk_manual_clock_now_micros(NULL, &i), RK_NULL_POINTER, "clock");
  CHECK_STR(rk_last_error_message(), "rk_manual_clock_now_micros: clock is NULL");
  CHECK_I64(i, UNTOUCHED_I64);
  CHECK_DOUBLE(d, UNTOUCHED_DOUBLE);
  CHECK(b);
  /* Freeing NULL does nothing. */
  rk_rate_limiter_free(NULL);
  rk_manual_clock_free(NULL);
}

static void null_out_parameters(void) {
  CHECK_FAILS(rk_manual_clock_new(NULL), RK_NULL_POINTER, "out_clock");
  CHECK_FAILS(rk_manual_clock_now_micros(clock_, NULL), RK_NULL_POINTER, "out_micros");
  CHECK_FAILS(rk_rate_limiter_new_bursty(1.0, 1.0, NULL, NULL), RK_NULL_POINTER, "out_limiter");
  CHECK_FAILS(rk_rate_limiter_new_warming_up(1.0, 0, 3.0, clock_, NULL), RK_NULL_POINTER, "out_limiter");
  CHECK_FAILS(rk_rate_limiter_try_acquire(limiter_, 1, 0, NULL), RK_NULL_POINTER, "out_acquired");
  CHECK_FAILS(rk_rate_limiter_reserve(limiter_, 1, NULL), RK_NULL_POINTER, "out_wait_micros");
  CHECK_FAILS(rk_rate_limiter_get_rate(limiter_, NULL), RK_NULL_POINTER, "out_permits_per_second");
  CHECK_FAILS(rk_rate_limiter_time_until_available(limiter_, 1, NULL), RK_NULL_POINTER, "out_micros");
  CHECK_FAILS(rk_rate_limiter_can_acquire(limiter_, 1, 0, NULL), RK_NULL_POINTER, "out_can_acquire");
  CHECK_STR(rk_last_error_message(), "rk_rate_limiter_can_acquire: out_can_acquire is NULL");
  /* A NULL out-parameter is caught before anything is taken: the limiter
   * (5 permits/s, untouched so far) still grants at once. */
  int64_t wait = UNTOUCHED_I64;
  CHECK_OK(rk_rate_limiter_time_until_available(limiter_, 1, &wait));
  CHECK_I64(wait, 0);
}

static void invalid_rates(void) {
  const double bad[] = {0.0, -0.0, -1.0, -INFINITY, NAN, -1e-300};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    rk_rate_limiter *limiter = NULL;
    CHECK_FAILS(rk_rate_limiter_new_bursty(bad[k], 1.0, clock_, &limiter), RK_INVALID_ARGUMENT,
                "permits_per_second");
    CHECK_FAILS(rk_rate_limiter_new_warming_up(bad[k], 1000, 3.0, NULL, &limiter), RK_INVALID_ARGUMENT,
                "permits_per_second");
    CHECK(limiter == NULL);
    CHECK_FAILS(rk_rate_limiter_set_rate(limiter_, bad[k]), RK_INVALID_ARGUMENT, "permits_per_second");
  }
  CHECK_STATUS(rk_rate_limiter_set_rate(limiter_, NAN), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_set_rate: invalid argument permits_per_second = NaN: must be positive and not NaN");
  CHECK_STATUS(rk_rate_limiter_set_rate(limiter_, -0.0), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_set_rate: invalid argument permits_per_second = -0.0: must be positive and not NaN");
  /* The rejected rates changed nothing. */
  double rate = UNTOUCHED_DOUBLE;
  CHECK_OK(rk_rate_limiter_get_rate(limiter_, &rate));
  CHECK_DOUBLE(rate, 5.0);
}

static void invalid_shapes(void) {
  rk_rate_limiter *limiter = NULL;
  const double bad_bursts[] = {-1.0, -1e-9, NAN, INFINITY, -INFINITY};
  for (size_t k = 0; k < sizeof bad_bursts / sizeof bad_bursts[0]; k++) {
    CHECK_FAILS(rk_rate_limiter_new_bursty(1.0, bad_bursts[k], clock_, &limiter), RK_INVALID_ARGUMENT,
                "max_burst_seconds");
  }
  CHECK_FAILS(rk_rate_limiter_new_warming_up(1.0, -1, 3.0, clock_, &limiter), RK_INVALID_ARGUMENT,
              "warmup_micros");
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_new_warming_up: invalid argument warmup_micros = -1: must be between 0 and 9223372036854775807 microseconds (about 292,271 years)");
  CHECK_FAILS(rk_rate_limiter_new_warming_up(1.0, INT64_MIN, 3.0, clock_, &limiter), RK_INVALID_ARGUMENT,
              "warmup_micros");
  const double bad_factors[] = {0.999, 0.0, -3.0, NAN, INFINITY};
  for (size_t k = 0; k < sizeof bad_factors / sizeof bad_factors[0]; k++) {
    CHECK_FAILS(rk_rate_limiter_new_warming_up(1.0, 1000, bad_factors[k], clock_, &limiter),
                RK_INVALID_ARGUMENT, "cold_factor");
  }
  CHECK(limiter == NULL);
  /* The edges that are allowed. */
  CHECK_OK(rk_rate_limiter_new_bursty(1.0, 0.0, clock_, &limiter));
  rk_rate_limiter_free(limiter);
  CHECK_OK(rk_rate_limiter_new_warming_up(1.0, 0, 1.0, clock_, &limiter));
  rk_rate_limiter_free(limiter);
  CHECK_OK(rk_rate_limiter_new_warming_up(INFINITY, INT64_MAX, 3.0, clock_, &limiter));
  rk_rate_limiter_free(limiter);
}

static void invalid_permits(void) {
  const int64_t bad[] = {0, -1, (int64_t)INT32_MAX + 1, INT64_MIN, INT64_MAX, (int64_t)UINT32_MAX + 1};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    int64_t i = UNTOUCHED_I64;
    double d = UNTOUCHED_DOUBLE;
    bool b = true;
    CHECK_FAILS(rk_rate_limiter_acquire(limiter_, bad[k], &d), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_acquire(limiter_, bad[k], NULL), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_acquire_micros(limiter_, bad[k], &i), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_try_acquire(limiter_, bad[k], 1000000, &b), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_reserve(limiter_, bad[k], &i), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_time_until_available(limiter_, bad[k], &i), RK_INVALID_ARGUMENT, "permits");
    CHECK_FAILS(rk_rate_limiter_can_acquire(limiter_, bad[k], 0, &b), RK_INVALID_ARGUMENT, "permits");
    CHECK_I64(i, UNTOUCHED_I64);
    CHECK_DOUBLE(d, UNTOUCHED_DOUBLE);
    CHECK(b);
  }
  CHECK_STATUS(rk_rate_limiter_acquire(limiter_, (int64_t)INT32_MAX + 1, NULL), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_acquire: invalid argument permits = 2147483648: must be between 1 and 2147483647");
  CHECK_STATUS(rk_rate_limiter_try_acquire(limiter_, -5, 0, &(bool){false}), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_try_acquire: invalid argument permits = -5: must be between 1 and 2147483647");
  /* Nothing was taken and the clock did not move. */
  int64_t wait = UNTOUCHED_I64, now = UNTOUCHED_I64;
  CHECK_OK(rk_rate_limiter_time_until_available(limiter_, 1, &wait));
  CHECK_I64(wait, 0);
  CHECK_OK(rk_manual_clock_now_micros(clock_, &now));
  CHECK_I64(now, 0);
  /* The largest request is fine. */
  CHECK_OK(rk_rate_limiter_acquire_micros(limiter_, INT32_MAX, &wait));
  CHECK_I64(wait, 0);
}

/* Like errno: successful calls leave the last error alone, and every thread
 * has its own. */
static void *fail_on_another_thread(void *arg) {
  (void)arg;
  /* A new thread has no last error yet. */
  int fresh = rk_last_error_argument() == NULL && strcmp(rk_last_error_message(), "") == 0;
  rk_status status = rk_rate_limiter_set_rate(limiter_, -2.0);
  int named = rk_last_error_argument() != NULL && strcmp(rk_last_error_argument(), "permits_per_second") == 0;
  return (void *)(intptr_t)(fresh && status == RK_INVALID_ARGUMENT && named);
}

static void last_error_is_per_thread(void) {
  CHECK_STATUS(rk_rate_limiter_reserve(limiter_, 0, &(int64_t){0}), RK_INVALID_ARGUMENT);
  double rate = 0.0;
  CHECK_OK(rk_rate_limiter_get_rate(limiter_, &rate));
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STR(rk_last_error_message(),
            "rk_rate_limiter_reserve: invalid argument permits = 0: must be between 1 and 2147483647");
  pthread_t thread;
  void *ok = NULL;
  CHECK(pthread_create(&thread, NULL, fail_on_another_thread, NULL) == 0);
  CHECK(pthread_join(thread, &ok) == 0);
  CHECK(ok != NULL);
  /* The other thread's failure did not touch this thread's. */
  CHECK_STR(rk_last_error_argument(), "permits");
}

int main(void) {
  /* Before any failure on this thread. */
  CHECK_STR(rk_last_error_message(), "");
  CHECK_STR(rk_last_error_argument(), NULL);
  CHECK_OK(rk_manual_clock_new(&clock_));
  CHECK_OK(rk_rate_limiter_new_bursty(5.0, 1.0, clock_, &limiter_));
  if (clock_ == NULL || limiter_ == NULL) return check_summary("test_errors");

  null_handles();
  null_out_parameters();
  invalid_rates();
  invalid_shapes();
  invalid_permits();
  last_error_is_per_thread();

  rk_rate_limiter_free(limiter_);
  rk_manual_clock_free(clock_);
  return check_summary("test_errors");
}
