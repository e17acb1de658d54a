/*
 * The concurrency limiter and its permits (fixed, AIMD and gradient
 * limits), and the composite limiter.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "check.h"

static rk_permit *acquire(const rk_concurrency_limiter *limiter, rk_decision *d) {
  rk_permit *permit = (rk_permit *)&permit; /* must be overwritten */
  CHECK_OK(rk_concurrency_limiter_try_acquire(limiter, d, &permit));
  return permit;
}

static uint64_t in_flight(const rk_concurrency_limiter *limiter) {
  uint64_t n = 777;
  CHECK_OK(rk_concurrency_limiter_in_flight(limiter, &n));
  return n;
}

static uint64_t current_limit(const rk_concurrency_limiter *limiter) {
  uint64_t n = 777;
  CHECK_OK(rk_concurrency_limiter_limit(limiter, &n));
  return n;
}

static uint64_t release(rk_permit *permit, rk_outcome outcome) {
  uint64_t limit = 777;
  CHECK_OK(rk_permit_release(permit, outcome, &limit));
  return limit;
}

static void fixed(void) {
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_concurrency_limiter_new_fixed(2, NULL, &limiter));
  if (limiter == NULL) return;
  rk_decision d;
  rk_permit *a = acquire(limiter, &d);
  CHECK(a != NULL);
  CHECK_DECISION(d, true, 2, 1, 0, 0, 0, 0);
  rk_permit *b = acquire(limiter, &d);
  CHECK(b != NULL);
  CHECK_DECISION(d, true, 2, 0, 0, 0, 0, 0);
  /* Refused: no permit, and no estimate of when one frees up. */
  rk_permit *c = acquire(limiter, &d);
  CHECK(c == NULL);
  CHECK_DECISION(d, false, 2, 0, 0, 0, 0, 0);
  CHECK_I64(in_flight(limiter), 2);
  CHECK_I64(release(a, RK_OUTCOME_SUCCESS), 2);
  CHECK_I64(in_flight(limiter), 1);
  /* The decision is optional. */
  rk_permit *e = acquire(limiter, NULL);
  CHECK(e != NULL);
  CHECK_I64(release(b, RK_OUTCOME_DROPPED), 2);
  CHECK_OK(rk_permit_release(e, RK_OUTCOME_IGNORED, NULL));
  CHECK_I64(in_flight(limiter), 0);
  /* A fixed limit ignores samples. */
  uint64_t limit = 0;
  CHECK_OK(rk_concurrency_limiter_sample(limiter, 1000, 2, true, &limit));
  CHECK_I64(limit, 2);
  CHECK_OK(rk_concurrency_limiter_sample(limiter, 1000, 2, false, NULL));
  rk_concurrency_limiter_free(limiter);
  rk_concurrency_limiter_free(NULL);
}

static void config_defaults(void) {
  rk_gradient_config g;
  rk_aimd_config a;
  CHECK_OK(rk_gradient_config_default(&g));
  CHECK_OK(rk_aimd_config_default(&a));
  /* Netflix concurrency-limits' defaults. */
  CHECK_I64(g.initial_limit, 50);
  CHECK_I64(g.min_limit, 1);
  CHECK_I64(g.max_limit, 1000);
  CHECK_DOUBLE(g.smoothing, 0.2);
  CHECK_DOUBLE(g.rtt_tolerance, 2.0);
  CHECK_I64(g.queue_size, 4);
  CHECK_DOUBLE(g.backoff_ratio, 0.9);
  CHECK_I64(g.probe_interval, 1000);
  CHECK_I64(a.initial_limit, 20);
  CHECK_I64(a.min_limit, 20);
  CHECK_I64(a.max_limit, 200);
  CHECK_DOUBLE(a.backoff_ratio, 0.9);
  CHECK_I64(a.rtt_timeout_micros, 5000000);
  /* And they make limiters. */
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_concurrency_limiter_new_gradient(&g, NULL, &limiter));
  CHECK_I64(current_limit(limiter), 50);
  rk_concurrency_limiter_free(limiter);
  limiter = NULL;
  CHECK_OK(rk_concurrency_limiter_new_aimd(&a, NULL, &limiter));
  CHECK_I64(current_limit(limiter), 20);
  rk_concurrency_limiter_free(limiter);
}

/* AIMD: +1 for a success with at least half the limit in flight; times
 * the backoff ratio for a drop or a round trip over the timeout. */
static void aimd(void) {
  rk_manual_clock *clock = NULL;
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_aimd_config config;
  CHECK_OK(rk_aimd_config_default(&config));
  config.initial_limit = 2;
  config.min_limit = 1;
  config.max_limit = 10;
  CHECK_OK(rk_concurrency_limiter_new_aimd(&config, clock, &limiter));
  if (limiter == NULL) return;
  rk_permit *p = acquire(limiter, NULL);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 20000));
  CHECK_I64(release(p, RK_OUTCOME_SUCCESS), 3); /* half used: +1 */
  p = acquire(limiter, NULL);
  CHECK_I64(release(p, RK_OUTCOME_SUCCESS), 3); /* 1 of 3: less than half */
  p = acquire(limiter, NULL);
  CHECK_I64(release(p, RK_OUTCOME_IGNORED), 3);
  p = acquire(limiter, NULL);
  CHECK_I64(release(p, RK_OUTCOME_DROPPED), 2); /* 3 * 0.9, truncated */
  /* Round trips are measured on the clock: over 5 s is a drop. */
  rk_permit *q = acquire(limiter, NULL);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 5000001));
  rk_permit *r = acquire(limiter, NULL);
  CHECK_I64(release(q, RK_OUTCOME_SUCCESS), 1); /* 2 * 0.9 */
  CHECK_I64(release(r, RK_OUTCOME_SUCCESS), 2); /* no time, started with 2 of 2 in flight */
  /* Samples measured elsewhere. */
  uint64_t limit = 0;
  CHECK_OK(rk_concurrency_limiter_sample(limiter, 1000, 1, false, &limit));
  CHECK_I64(limit, 3);
  CHECK_OK(rk_concurrency_limiter_sample(limiter, 1000, 5, true, &limit));
  CHECK_I64(limit, 2);
  CHECK_I64(current_limit(limiter), 2);
  rk_concurrency_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* The gradient rule with flat round trips grows by the queue size for each
 * sample whose request started with at least half the limit in flight. */
static void gradient(void) {
  rk_manual_clock *clock = NULL;
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_gradient_config config;
  CHECK_OK(rk_gradient_config_default(&config));
  config.initial_limit = 4;
  config.probe_interval = 0;
  CHECK_OK(rk_concurrency_limiter_new_gradient(&config, clock, &limiter));
  if (limiter == NULL) return;
  rk_permit *permits[4];
  for (int i = 0; i < 4; i++) permits[i] = acquire(limiter, NULL);
  CHECK_I64(in_flight(limiter), 4);
  CHECK(acquire(limiter, NULL) == NULL);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 10000));
  for (int i = 0; i < 4; i++) release(permits[i], RK_OUTCOME_SUCCESS);
  /* The 2nd (2 of 4) and the 4th (4 of 8) grew it: 4 + 4 + 4. */
  CHECK_I64(current_limit(limiter), 12);
  CHECK_I64(in_flight(limiter), 0);
  rk_concurrency_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* A permit holds its limiter: it can be released after the handle is
 * freed (valgrind checks that nothing leaks). */
static void permits_outlive_their_limiter(void) {
  rk_concurrency_limiter *limiter = NULL;
  CHECK_OK(rk_concurrency_limiter_new_fixed(1, NULL, &limiter));
  if (limiter == NULL) return;
  rk_permit *p = acquire(limiter, NULL);
  CHECK(p != NULL);
  rk_concurrency_limiter_free(limiter);
  /* A bad outcome releases nothing: the permit is still ours. */
  CHECK_STATUS(rk_permit_release(p, 3, NULL), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "outcome");
  CHECK_STR(rk_last_error_message(), "rk_permit_release: invalid argument outcome = 3: must be RK_OUTCOME_SUCCESS, "
                                     "RK_OUTCOME_DROPPED or RK_OUTCOME_IGNORED");
  CHECK_I64(release(p, RK_OUTCOME_SUCCESS), 1);
}

static rk_decision composite_check(const rk_composite_limiter *limiter, int64_t cost) {
  rk_decision d;
  CHECK_OK(rk_composite_limiter_check(limiter, cost, &d));
  return d;
}

/* 2 per second and 3 per 10 seconds, all or nothing (the vector
 * composite/per-second-and-per-ten-seconds). */
static void composite(void) {
  rk_manual_clock *clock = NULL;
  rk_composite_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  const rk_limiter_spec limits[] = {
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 2, .window_micros = 1000000},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 10000000},
  };
  CHECK_OK(rk_composite_limiter_new(limits, 2, clock, &limiter));
  if (limiter == NULL) return;
  size_t len = 0;
  CHECK_OK(rk_composite_limiter_len(limiter, &len));
  CHECK_I64(len, 2);
  CHECK(composite_check(limiter, 2).allowed);
  rk_decision d, parts[3];
  parts[2].limit = 777;
  CHECK_OK(rk_composite_limiter_check_each(limiter, 1, &d, parts, 3));
  CHECK(!d.allowed);
  CHECK(!parts[0].allowed);
  /* The part that would have admitted it shows its state untouched. */
  CHECK(parts[1].allowed);
  CHECK_I64(parts[1].remaining, 1);
  CHECK_I64(parts[2].limit, 777); /* room for more parts is left alone */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  CHECK(composite_check(limiter, 1).allowed);
  /* Now the ten-second log refuses: its retry-after is the longest. */
  CHECK_OK(rk_composite_limiter_check_each(limiter, 1, &d, parts, 2));
  CHECK_DECISION(d, false, 3, 0, 9000000, 10000000, 0, 10000000);
  CHECK_I64(parts[0].remaining, 1); /* nothing taken from the admitting part */
  rk_decision peeked;
  CHECK_OK(rk_composite_limiter_peek(limiter, 1, &peeked));
  CHECK(same_decision(&peeked, &d));
  /* Too few parts: nothing is taken. */
  CHECK_STATUS(rk_composite_limiter_check_each(limiter, 0, &d, parts, 1), RK_BUFFER_TOO_SMALL);
  CHECK_STR(rk_last_error_argument(), "parts_len");
  CHECK_STR(rk_last_error_message(),
            "rk_composite_limiter_check_each: parts_len = 1: the buffer must hold 2 decisions (one per limit)");
  rk_composite_limiter_free(limiter);
  rk_composite_limiter_free(NULL);
  rk_manual_clock_free(clock);
}

int main(void) {
  fixed();
  config_defaults();
  aimd();
  gradient();
  permits_outlive_their_limiter();
  composite();
  return check_summary("test_concurrency");
}
