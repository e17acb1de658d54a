/*
 * Many threads hammering one limiter handle, with no locking of their own.
 *
 * 1. On a manual clock that one thread moves in steps of exactly one
 *    interval: whatever the interleaving, the limiter must grant exactly
 *    rate x T + 1 permits (+1: Guava grants the first request at once and
 *    makes the next one pay). A lost update would grant more, a torn one
 *    anything. Readers query the same handle meanwhile.
 * 2. On the real clock: the permits granted in T seconds never exceed
 *    rate x T + the stored burst + 1 (plus Guava's truncation of waits to
 *    whole microseconds: at most 1 µs per grant).
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

enum { HAMMERS = 4, READERS = 2 };

struct shared {
  const rk_rate_limiter *limiter;
  atomic_bool done;         /* the clock will not move again */
  atomic_int failures;      /* calls that did not return RK_OK */
  atomic_llong granted;     /* permits granted, all threads */
  double run_seconds;       /* for the real-clock test */
};

/* try_acquire(1, no wait) in a loop. On the manual clock: until refused
 * after the clock has stopped. On the real clock: for run_seconds. */
static void *hammer(void *arg) {
  struct shared *s = arg;
  long long granted = 0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    bool done = atomic_load(&s->done); /* read before trying */
    bool acquired = false;
    if (rk_rate_limiter_try_acquire(s->limiter, 1, 0, &acquired) != RK_OK) {
      atomic_fetch_add(&s->failures, 1);
      break;
    }
    if (acquired) {
      granted++;
    } else if (done) {
      break;
    }
    if (s->run_seconds > 0) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      if ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 >= s->run_seconds) break;
    }
  }
  atomic_fetch_add(&s->granted, granted);
  return NULL;
}

/* Queries that take nothing, on the same handle. */
static void *reader(void *arg) {
  struct shared *s = arg;
  while (!atomic_load(&s->done)) {
    int64_t micros = -1;
    bool can = false;
    double rate = 0.0;
    if (rk_rate_limiter_time_until_available(s->limiter, 1, &micros) != RK_OK || micros < 0 ||
        rk_rate_limiter_can_acquire(s->limiter, 1, 0, &can) != RK_OK ||
        rk_rate_limiter_get_rate(s->limiter, &rate) != RK_OK || rate != 1000.0) {
      atomic_fetch_add(&s->failures, 1);
      break;
    }
  }
  return NULL;
}

static void manual_clock_exact_total(void) {
  /* 1000 permits/s, so the interval is 1000 µs; 1 s of burst, so no
   * permit is ever lost to the cap however late the hammers come. */
  const int64_t interval = 1000, steps = 1000;
  rk_manual_clock *clock = NULL;
  rk_rate_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_rate_limiter_new_bursty(1000.0, 1.0, clock, &limiter));
  if (clock == NULL || limiter == NULL) return;

  struct shared s = {.limiter = limiter, .run_seconds = 0};
  atomic_init(&s.done, false);
  atomic_init(&s.failures, 0);
  atomic_init(&s.granted, 0);
  pthread_t threads[HAMMERS + READERS];
  for (int i = 0; i < HAMMERS + READERS; i++) {
    CHECK(pthread_create(&threads[i], NULL, i < HAMMERS ? hammer : reader, &s) == 0);
  }
  for (int64_t i = 0; i < steps; i++) {
    CHECK_OK(rk_manual_clock_advance_micros(clock, interval));
    if (i % 16 == 0) sched_yield();
  }
  atomic_store(&s.done, true);
  for (int i = 0; i < HAMMERS + READERS; i++) CHECK(pthread_join(threads[i], NULL) == 0);

  CHECK_I64(atomic_load(&s.failures), 0);
  CHECK_I64(atomic_load(&s.granted), steps + 1);
  /* And not one more, now or later at this time. */
  bool acquired = true;
  CHECK_OK(rk_rate_limiter_try_acquire(limiter, 1, 0, &acquired));
  CHECK(!acquired);
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

static void real_clock_bound(void) {
  const double rate = 2000.0, burst_seconds = 0.01;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  rk_rate_limiter *limiter = NULL;
  CHECK_OK(rk_rate_limiter_new_bursty(rate, burst_seconds, NULL, &limiter));
  if (limiter == NULL) return;

  struct shared s = {.limiter = limiter, .run_seconds = 0.3};
  atomic_init(&s.done, false);
  atomic_init(&s.failures, 0);
  atomic_init(&s.granted, 0);
  pthread_t threads[HAMMERS];
  for (int i = 0; i < HAMMERS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, &s) == 0);
  for (int i = 0; i < HAMMERS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  clock_gettime(CLOCK_MONOTONIC, &end);

  double t = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  long long granted = atomic_load(&s.granted);
  /* Guava truncates each wait to whole microseconds, so a grant that is
   * part stored, part fresh can come up to 1 µs early: allow 1 µs each. */
  long long bound = (long long)(rate * (t + (double)granted * 1e-6) + rate * burst_seconds) + 1;
  CHECK_I64(atomic_load(&s.failures), 0);
  CHECK(granted <= bound);
  /* Not starved either: most of the schedule was used (lenient, for
   * valgrind's serialized threads). */
  CHECK(granted >= (long long)(rate * 0.3 / 4));
  printf("real clock: %lld permits granted in %.3f s (bound %lld)\n", granted, t, bound);
  rk_rate_limiter_free(limiter);
}

int main(void) {
  manual_clock_exact_total();
  real_clock_bound();
  return check_summary("test_threads");
}
