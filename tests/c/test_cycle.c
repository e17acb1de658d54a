/*
 * Resilience4j's cycle limiter (rk_cycle_limiter) on a manual clock: the
 * decisions and waits of the non-blocking calls, the blocking call moving
 * the clock, the run-time changes, the drain, the metrics and the errors;
 * and on real time, a blocked caller counted among the waiting threads.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <time.h>

#include "check.h"

/* A call that must fail with `status`, naming `argument`. */
#define CHECK_FAILS(call, status, argument)          \
  do {                                               \
    CHECK_STATUS(call, status);                      \
    CHECK_STR(rk_last_error_argument(), (argument)); \
  } while (0)

static rk_cycle_limiter *make(int64_t limit, int64_t period, int64_t timeout, const rk_manual_clock *clock) {
  rk_cycle_config config = {limit, period, timeout};
  rk_cycle_limiter *limiter = NULL;
  CHECK_OK(rk_cycle_limiter_new(&config, clock, &limiter));
  return limiter;
}

static int64_t now(const rk_manual_clock *clock) {
  int64_t micros = -1;
  CHECK_OK(rk_manual_clock_now_micros(clock, &micros));
  return micros;
}

static rk_cycle_metrics metrics(const rk_cycle_limiter *limiter) {
  rk_cycle_metrics m;
  memset(&m, 0xAB, sizeof m);
  CHECK_OK(rk_cycle_limiter_metrics(limiter, &m));
  return m;
}

/* 3 permits per 10 ms, waits up to 12 ms: Resilience4j's
 * reservePermissionsUpfront, through the non-blocking calls. */
static void reservations_and_decisions(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_cycle_limiter *limiter = make(3, 10000, 12000, clock);
  if (limiter == NULL) return;
  int64_t wait = -2;
  for (int i = 0; i < 3; i++) {
    CHECK_OK(rk_cycle_limiter_reserve_permission(limiter, 1, &wait));
    CHECK_I64(wait, 0);
  }
  rk_decision d;
  CHECK_OK(rk_cycle_limiter_acquire_permission(limiter, 2, &d));
  CHECK(d.allowed);
  CHECK_I64(d.wait_micros, 10000);
  CHECK_I64(d.reset_after_micros, 20000);
  CHECK_OK(rk_cycle_limiter_reserve_permission(limiter, 1, &wait));
  CHECK_I64(wait, 10000);
  /* The next would wait 20 ms: refused, nothing taken (-1, as Resilience4j). */
  CHECK_OK(rk_cycle_limiter_reserve_permission(limiter, 1, &wait));
  CHECK_I64(wait, -1);
  CHECK_OK(rk_cycle_limiter_acquire_permission(limiter, 1, &d));
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, 8000);
  CHECK_OK(rk_cycle_limiter_try_acquire_permission(limiter, 1, &d));
  CHECK(!d.allowed);
  rk_cycle_metrics m = metrics(limiter);
  CHECK_I64(m.available_permissions, -3);
  CHECK_I64(m.micros_to_wait, 20000);
  CHECK_I64(m.cycle, 0);
  CHECK_I64((int64_t)m.number_of_waiting_threads, 0);
  CHECK_I64(now(clock), 0); /* nothing waited */
  rk_cycle_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* The blocking call advances a manual clock by the wait, or by the timeout
 * when it refuses. */
static void blocking_on_a_manual_clock(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_cycle_limiter *limiter = make(2, 100000, 150000, clock);
  if (limiter == NULL) return;
  bool acquired = false;
  CHECK_OK(rk_cycle_limiter_acquire_permission_blocking(limiter, 2, &acquired));
  CHECK(acquired);
  CHECK_I64(now(clock), 0);
  CHECK_OK(rk_cycle_limiter_acquire_permission_blocking(limiter, 1, &acquired));
  CHECK(acquired);
  CHECK_I64(now(clock), 100000);
  /* 4 more would need the cycle at 300 ms: refused after the 150 ms timeout. */
  CHECK_OK(rk_cycle_limiter_acquire_permission_blocking(limiter, 4, &acquired));
  CHECK(!acquired);
  CHECK_I64(now(clock), 250000);
  /* Nothing taken: cycle 2's count, capped at limit_for_period. */
  CHECK_I64(metrics(limiter).available_permissions, 2);
  rk_cycle_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

static void changes_and_drain(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_cycle_limiter *limiter = make(10, 250000, 500000, clock);
  if (limiter == NULL) return;
  rk_decision d;
  CHECK_OK(rk_cycle_limiter_acquire_permission(limiter, 7, &d));
  uint64_t drained = 99;
  CHECK_OK(rk_cycle_limiter_drain_permissions(limiter, &drained));
  CHECK_I64((int64_t)drained, 3);
  CHECK_OK(rk_cycle_limiter_drain_permissions(limiter, &drained));
  CHECK_I64((int64_t)drained, 0);
  CHECK_OK(rk_cycle_limiter_change_limit_for_period(limiter, 5));
  CHECK_OK(rk_cycle_limiter_change_timeout_duration(limiter, 0));
  rk_cycle_config c;
  CHECK_OK(rk_cycle_limiter_config(limiter, &c));
  CHECK_I64(c.limit_for_period, 5);
  CHECK_I64(c.limit_refresh_period_micros, 250000);
  CHECK_I64(c.timeout_duration_micros, 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 250000));
  CHECK_I64(metrics(limiter).available_permissions, 5);
  CHECK_OK(rk_cycle_limiter_acquire_permission(limiter, 6, &d));
  CHECK(!d.allowed); /* a timeout of 0: only what this cycle has */
  rk_cycle_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

static void errors(void) {
  rk_cycle_limiter *limiter = NULL;
  rk_cycle_config bad = {0, 1000, 0};
  CHECK_FAILS(rk_cycle_limiter_new(&bad, NULL, &limiter), RK_INVALID_ARGUMENT, "limit_for_period");
  bad = (rk_cycle_config){-1, 1000, 0};
  CHECK_FAILS(rk_cycle_limiter_new(&bad, NULL, &limiter), RK_INVALID_ARGUMENT, "limit_for_period");
  bad = (rk_cycle_config){(int64_t)1 << 31, 1000, 0};
  CHECK_FAILS(rk_cycle_limiter_new(&bad, NULL, &limiter), RK_INVALID_ARGUMENT, "limit_for_period");
  bad = (rk_cycle_config){1, 0, 0};
  CHECK_FAILS(rk_cycle_limiter_new(&bad, NULL, &limiter), RK_INVALID_ARGUMENT, "limit_refresh_period_micros");
  CHECK(strstr(rk_last_error_message(), "limit_refresh_period_micros = 0") != NULL);
  bad = (rk_cycle_config){1, 1000, -1};
  CHECK_FAILS(rk_cycle_limiter_new(&bad, NULL, &limiter), RK_INVALID_ARGUMENT, "timeout_duration_micros");
  CHECK(limiter == NULL);
  CHECK_FAILS(rk_cycle_limiter_new(NULL, NULL, &limiter), RK_NULL_POINTER, "config");

  limiter = make(1, 1000, 0, NULL);
  if (limiter == NULL) return;
  rk_decision d;
  int64_t wait = 0;
  CHECK_FAILS(rk_cycle_limiter_acquire_permission(limiter, -1, &d), RK_INVALID_ARGUMENT, "permits");
  CHECK_FAILS(rk_cycle_limiter_acquire_permission(limiter, 1, NULL), RK_NULL_POINTER, "out_decision");
  CHECK_FAILS(rk_cycle_limiter_reserve_permission(NULL, 1, &wait), RK_NULL_POINTER, "limiter");
  CHECK_FAILS(rk_cycle_limiter_change_limit_for_period(limiter, 0), RK_INVALID_ARGUMENT, "limit_for_period");
  CHECK_FAILS(rk_cycle_limiter_change_timeout_duration(limiter, -5), RK_INVALID_ARGUMENT, "timeout_duration_micros");
  rk_cycle_config c;
  CHECK_OK(rk_cycle_limiter_config(limiter, &c));
  CHECK_I64(c.limit_for_period, 1); /* the bad changes changed nothing */
  CHECK_I64(c.timeout_duration_micros, 0);
  rk_cycle_limiter_free(limiter);
  rk_cycle_limiter_free(NULL);
}

static void *acquire_blocking(void *limiter) {
  bool acquired = false;
  CHECK_OK(rk_cycle_limiter_acquire_permission_blocking(limiter, 1, &acquired));
  CHECK(acquired);
  return NULL;
}

/* On real time a caller blocked for the next cycle is counted while it
 * waits. */
static void waiting_threads_are_counted(void) {
  rk_cycle_limiter *limiter = make(1, 400000, 1000000, NULL);
  if (limiter == NULL) return;
  rk_decision d;
  CHECK_OK(rk_cycle_limiter_acquire_permission(limiter, 1, &d));
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, acquire_blocking, limiter) == 0);
  uint64_t seen = 0;
  for (int i = 0; i < 300 && seen == 0; i++) {
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
    seen = metrics(limiter).number_of_waiting_threads;
  }
  CHECK_I64((int64_t)seen, 1);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK_I64((int64_t)metrics(limiter).number_of_waiting_threads, 0);
  rk_cycle_limiter_free(limiter);
}

int main(void) {
  reservations_and_decisions();
  blocking_on_a_manual_clock();
  changes_and_drain();
  errors();
  waiting_threads_are_counted();
  return check_summary("test_cycle");
}
