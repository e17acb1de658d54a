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
 * 3. Every admission-style algorithm (rk_limiter) and a composite, on a
 *    manual clock that stands still while the threads hammer: together
 *    they must be admitted exactly the limit, round after round — one more
 *    would be a lost update — while readers peek at the same handle.
 * 4. A token bucket on the real clock: at most rate x T + burst.
 * 5. A concurrency limiter: never more permits out than its limit, and
 *    none left out at the end.
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

/* ---- Every admission-style algorithm ---------------------------------- */

enum { ADMIT_LIMIT = 400, ROUNDS = 3 };

struct admission {
  const rk_limiter *limiter;           /* one of the two */
  const rk_composite_limiter *composite;
  atomic_bool done;                    /* the round is over (readers stop) */
  atomic_int failures;
  atomic_llong admitted;
};

static rk_status admission_check(const struct admission *a, rk_decision *d) {
  return a->limiter != NULL ? rk_limiter_check(a->limiter, 1, d) : rk_composite_limiter_check(a->composite, 1, d);
}

/* check(1) until refused: on a clock that stands still a refusal is
 * final. */
static void *admit_until_refused(void *arg) {
  struct admission *a = arg;
  long long admitted = 0;
  for (;;) {
    rk_decision d;
    if (admission_check(a, &d) != RK_OK || d.limit != ADMIT_LIMIT || d.remaining > d.limit) {
      atomic_fetch_add(&a->failures, 1);
      break;
    }
    if (!d.allowed) break;
    admitted++;
  }
  atomic_fetch_add(&a->admitted, admitted);
  return NULL;
}

/* peek, which takes nothing, meanwhile: always a consistent decision. */
static void *peek_until_done(void *arg) {
  struct admission *a = arg;
  while (!atomic_load(&a->done)) {
    rk_decision d;
    rk_status status = a->limiter != NULL ? rk_limiter_peek(a->limiter, 1, &d)
                                          : rk_composite_limiter_peek(a->composite, 1, &d);
    if (status != RK_OK || d.limit != ADMIT_LIMIT || d.remaining > d.limit) {
      atomic_fetch_add(&a->failures, 1);
      break;
    }
  }
  return NULL;
}

/* ROUNDS rounds of HAMMERS threads against `a`, the clock moved 10 s (the
 * limiter whole again) between rounds: exactly ADMIT_LIMIT per round. */
static void admit_exactly(struct admission *a, rk_manual_clock *clock, const char *what) {
  for (int round = 0; round < ROUNDS; round++) {
    atomic_init(&a->done, false);
    atomic_init(&a->failures, 0);
    atomic_init(&a->admitted, 0);
    pthread_t threads[HAMMERS + 1];
    for (int i = 0; i < HAMMERS + 1; i++) {
      CHECK(pthread_create(&threads[i], NULL, i < HAMMERS ? admit_until_refused : peek_until_done, a) == 0);
    }
    for (int i = 0; i < HAMMERS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
    atomic_store(&a->done, true);
    CHECK(pthread_join(threads[HAMMERS], NULL) == 0);
    CHECK_I64(atomic_load(&a->failures), 0);
    long long admitted = atomic_load(&a->admitted);
    CHECK_I64(admitted, ADMIT_LIMIT);
    if (admitted != ADMIT_LIMIT) fprintf(stderr, "    %s, round %d\n", what, round);
    rk_decision d;
    CHECK_OK(admission_check(a, &d));
    CHECK(!d.allowed);
    CHECK_OK(rk_manual_clock_advance_micros(clock, 10000000));
  }
}

static void every_algorithm_admits_exactly_its_limit(void) {
  const rk_limiter_spec specs[] = {
      {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 100.0, .burst = ADMIT_LIMIT},
      {.algorithm = RK_ALGORITHM_GCRA, .max_burst = ADMIT_LIMIT - 1, .count_per_period = 100, .period_micros = 1000000},
      {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER, .capacity = ADMIT_LIMIT, .count_per_period = 100,
       .period_micros = 1000000},
      {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = ADMIT_LIMIT - 1, .interval_micros = 1000},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = ADMIT_LIMIT, .window_micros = 1000000},
      {.algorithm = RK_ALGORITHM_SLIDING_WINDOW, .limit = ADMIT_LIMIT, .window_micros = 1000000, .sub_windows = 4},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = ADMIT_LIMIT, .window_micros = 1000000},
      {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = ADMIT_LIMIT, .window_micros = 1000000},
  };
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    rk_manual_clock *clock = NULL;
    rk_limiter *limiter = NULL;
    CHECK_OK(rk_manual_clock_new(&clock));
    CHECK_OK(rk_limiter_new(&specs[k], clock, &limiter));
    if (limiter != NULL) {
      struct admission a = {.limiter = limiter};
      admit_exactly(&a, clock, rk_algorithm_name(specs[k].algorithm));
    }
    rk_limiter_free(limiter);
    rk_manual_clock_free(clock);
  }
  /* A composite: all or nothing, the stricter part deciding. */
  const rk_limiter_spec parts[] = {
      {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 100.0, .burst = ADMIT_LIMIT * 2},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = ADMIT_LIMIT, .window_micros = 1000000},
  };
  rk_manual_clock *clock = NULL;
  rk_composite_limiter *composite = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_composite_limiter_new(parts, 2, clock, &composite));
  if (composite != NULL) {
    struct admission a = {.composite = composite};
    admit_exactly(&a, clock, "composite");
  }
  rk_composite_limiter_free(composite);
  rk_manual_clock_free(clock);
}

/* ---- A token bucket on the real clock ---------------------------------- */

struct bucket_run {
  const rk_limiter *bucket;
  double run_seconds;
  atomic_int failures;
  atomic_llong admitted;
};

static void *check_for_a_while(void *arg) {
  struct bucket_run *r = arg;
  long long admitted = 0;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  do {
    rk_decision d;
    if (rk_limiter_check(r->bucket, 1, &d) != RK_OK) {
      atomic_fetch_add(&r->failures, 1);
      break;
    }
    admitted += d.allowed;
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < r->run_seconds);
  atomic_fetch_add(&r->admitted, admitted);
  return NULL;
}

static void token_bucket_real_clock_bound(void) {
  const double rate = 2000.0;
  const int64_t burst = 20;
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  rk_limiter *bucket = NULL;
  CHECK_OK(rk_limiter_new_token_bucket(rate, burst, NULL, &bucket));
  if (bucket == NULL) return;
  struct bucket_run r = {.bucket = bucket, .run_seconds = 0.3};
  atomic_init(&r.failures, 0);
  atomic_init(&r.admitted, 0);
  pthread_t threads[HAMMERS];
  for (int i = 0; i < HAMMERS; i++) CHECK(pthread_create(&threads[i], NULL, check_for_a_while, &r) == 0);
  for (int i = 0; i < HAMMERS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  clock_gettime(CLOCK_MONOTONIC, &end);
  double t = (double)(end.tv_sec - start.tv_sec) + (double)(end.tv_nsec - start.tv_nsec) / 1e9;
  long long admitted = atomic_load(&r.admitted);
  /* x/time/rate's arithmetic is in nanoseconds: at most rate x T + burst
   * (+1: T is measured on CLOCK_MONOTONIC, the limiter reads the TSC). */
  long long bound = (long long)(rate * t) + burst + 1;
  CHECK_I64(atomic_load(&r.failures), 0);
  CHECK(admitted <= bound);
  CHECK(admitted >= (long long)(rate * 0.3 / 4));
  printf("token bucket, real clock: %lld admitted in %.3f s (bound %lld)\n", admitted, t, bound);
  rk_limiter_free(bucket);
}

/* ---- A concurrency limiter --------------------------------------------- */

enum { PERMIT_LIMIT = 3, PERMIT_THREADS = 6, PERMIT_TRIES = 3000 };

struct permits_run {
  const rk_concurrency_limiter *limiter;
  atomic_int holding;   /* permits held right now, as the holders count them */
  atomic_int peak;
  atomic_int failures;
  atomic_llong granted;
  atomic_llong refused;
};

static void *acquire_and_release(void *arg) {
  struct permits_run *r = arg;
  long long granted = 0;
  for (int i = 0; i < PERMIT_TRIES; i++) {
    rk_permit *permit = NULL;
    rk_decision d;
    if (rk_concurrency_limiter_try_acquire(r->limiter, &d, &permit) != RK_OK || d.allowed != (permit != NULL)) {
      atomic_fetch_add(&r->failures, 1);
      break;
    }
    if (permit == NULL) {
      atomic_fetch_add(&r->refused, 1);
      continue;
    }
    granted++;
    int now = atomic_fetch_add(&r->holding, 1) + 1;
    int peak = atomic_load(&r->peak);
    while (now > peak && !atomic_compare_exchange_weak(&r->peak, &peak, now)) {
    }
    /* Hold it a while, so that the others find the limit reached; the
     * limiter's own count agrees meanwhile. */
    for (int k = 0; k < 3; k++) {
      uint64_t in_flight = 0;
      if (rk_concurrency_limiter_in_flight(r->limiter, &in_flight) != RK_OK || in_flight > PERMIT_LIMIT) {
        atomic_fetch_add(&r->failures, 1);
      }
      sched_yield();
    }
    atomic_fetch_sub(&r->holding, 1);
    rk_outcome outcome = i % 3 == 0 ? RK_OUTCOME_SUCCESS : i % 3 == 1 ? RK_OUTCOME_DROPPED : RK_OUTCOME_IGNORED;
    if (rk_permit_release(permit, outcome, NULL) != RK_OK) atomic_fetch_add(&r->failures, 1);
  }
  atomic_fetch_add(&r->granted, granted);
  return NULL;
}

static void permits_never_exceed_the_limit(void) {
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_concurrency_limiter_new_fixed(PERMIT_LIMIT, NULL, &limiter));
  if (limiter == NULL) return;
  struct permits_run r = {.limiter = limiter};
  atomic_init(&r.holding, 0);
  atomic_init(&r.peak, 0);
  atomic_init(&r.failures, 0);
  atomic_init(&r.granted, 0);
  atomic_init(&r.refused, 0);
  pthread_t threads[PERMIT_THREADS];
  for (int i = 0; i < PERMIT_THREADS; i++) CHECK(pthread_create(&threads[i], NULL, acquire_and_release, &r) == 0);
  for (int i = 0; i < PERMIT_THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  CHECK_I64(atomic_load(&r.failures), 0);
  CHECK(atomic_load(&r.peak) >= 1 && atomic_load(&r.peak) <= PERMIT_LIMIT);
  CHECK(atomic_load(&r.granted) > 0);
  /* The limit was reached: some tries were refused. */
  CHECK(atomic_load(&r.refused) > 0);
  uint64_t in_flight = 99;
  CHECK_OK(rk_concurrency_limiter_in_flight(limiter, &in_flight));
  CHECK_I64(in_flight, 0);
  printf("concurrency limiter: %lld permits, %lld refused, at most %d at once (limit %d)\n",
         atomic_load(&r.granted), atomic_load(&r.refused), atomic_load(&r.peak), PERMIT_LIMIT);
  rk_concurrency_limiter_free(limiter);
}

int main(void) {
  manual_clock_exact_total();
  real_clock_bound();
  every_algorithm_admits_exactly_its_limit();
  token_bucket_real_clock_bound();
  permits_never_exceed_the_limit();
  return check_summary("test_threads");
}
