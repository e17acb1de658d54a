/*
 * Unit tests of rk_limiter, the handle of every admission-style algorithm:
 * each algorithm's typed constructor and its spec, exact decisions on a
 * manual clock, the operations only one algorithm has (the token bucket's
 * Go API, GCRA's limit, the meter's level, the queue's blocking acquire),
 * and the real clock.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"

static rk_manual_clock *new_clock(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  if (clock == NULL) {
    fprintf(stderr, "cannot go on without a clock\n");
    exit(1);
  }
  return clock;
}

/* A limiter was made (`status`, `*limiter`), or the test cannot go on. */
static void must(rk_status status, rk_limiter *const *limiter) {
  if (status != RK_OK || *limiter == NULL) {
    fprintf(stderr, "cannot go on without a limiter: %s\n", rk_last_error_message());
    exit(1);
  }
}

static int64_t now_micros(const rk_manual_clock *clock) {
  int64_t now = -1;
  CHECK_OK(rk_manual_clock_now_micros(clock, &now));
  return now;
}

static rk_decision check(const rk_limiter *limiter, int64_t cost) {
  rk_decision d = {.limit = 777};
  CHECK_OK(rk_limiter_check(limiter, cost, &d));
  return d;
}

static rk_decision peek(const rk_limiter *limiter, int64_t cost) {
  rk_decision d = {.limit = 777};
  CHECK_OK(rk_limiter_peek(limiter, cost, &d));
  return d;
}

/* Go's x/time/rate at 10 tokens/s, burst 2 (the vector
 * token_bucket/burst-then-refill). */
static void token_bucket_decisions(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *bucket = NULL;
  must(rk_limiter_new_token_bucket(10.0, 2, clock, &bucket), &bucket);
  rk_decision d = check(bucket, 1);
  CHECK_DECISION(d, true, 2, 1, 0, 100000, 0, 200000);
  d = check(bucket, 1);
  CHECK_DECISION(d, true, 2, 0, 0, 200000, 0, 200000);
  d = peek(bucket, 1);
  CHECK_DECISION(d, false, 2, 0, 100000, 200000, 0, 200000);
  d = check(bucket, 1);
  CHECK_DECISION(d, false, 2, 0, 100000, 200000, 0, 200000);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 99999));
  d = check(bucket, 1);
  CHECK_DECISION(d, false, 2, 0, 1, 100001, 0, 200000);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1));
  d = check(bucket, 1);
  CHECK_DECISION(d, true, 2, 0, 0, 200000, 0, 200000);
  /* More than the burst: no wait can help. */
  d = check(bucket, 3);
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, RK_NEVER);
  /* A cost of 0 is a free look. */
  d = check(bucket, 0);
  CHECK(d.allowed);
  CHECK_I64(d.remaining, 0);
  rk_algorithm algorithm = 0;
  CHECK_OK(rk_limiter_algorithm(bucket, &algorithm));
  CHECK_I64(algorithm, RK_ALGORITHM_TOKEN_BUCKET);
  CHECK_I64(now_micros(clock), 100000); /* checks never move the clock */
  rk_limiter_free(bucket);
  rk_manual_clock_free(clock);
}

static double tokens(const rk_limiter *bucket) {
  double t = NAN;
  CHECK_OK(rk_token_bucket_tokens(bucket, &t));
  return t;
}

/* Go's Limit/Burst/SetLimit/SetBurst/Tokens. */
static void token_bucket_settings(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *bucket = NULL;
  must(rk_limiter_new_token_bucket(1.0, 5, clock, &bucket), &bucket);
  double rate = 0.0;
  uint64_t burst = 0;
  CHECK_OK(rk_token_bucket_rate(bucket, &rate));
  CHECK_OK(rk_token_bucket_burst(bucket, &burst));
  CHECK_DOUBLE(rate, 1.0);
  CHECK_I64(burst, 5);
  CHECK_DOUBLE(tokens(bucket), 5.0);
  CHECK(check(bucket, 5).allowed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 2000000));
  /* SetLimit refills up to now at the old rate first. */
  CHECK_OK(rk_token_bucket_set_rate(bucket, 10.0));
  CHECK_OK(rk_token_bucket_set_burst(bucket, 3));
  CHECK_OK(rk_token_bucket_rate(bucket, &rate));
  CHECK_OK(rk_token_bucket_burst(bucket, &burst));
  CHECK_DOUBLE(rate, 10.0);
  CHECK_I64(burst, 3);
  CHECK_DOUBLE(tokens(bucket), 2.0);
  /* Rate 0 never refills; INFINITY admits everything. */
  CHECK_OK(rk_token_bucket_set_rate(bucket, 0.0));
  CHECK(check(bucket, 2).allowed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000000));
  rk_decision d = check(bucket, 1);
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, RK_NEVER);
  CHECK_OK(rk_token_bucket_set_rate(bucket, INFINITY));
  CHECK_OK(rk_token_bucket_rate(bucket, &rate));
  CHECK(isinf(rate) && rate > 0);
  CHECK(check(bucket, 1000000).allowed);
  rk_limiter_free(bucket);
  rk_manual_clock_free(clock);
}

/* Go's ReserveN, Reservation.Delay/OK/Cancel. */
static void token_bucket_reservations(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *bucket = NULL;
  must(rk_limiter_new_token_bucket(10.0, 1, clock, &bucket), &bucket);
  CHECK(check(bucket, 1).allowed);
  rk_reservation *r = NULL;
  CHECK_OK(rk_token_bucket_reserve(bucket, 1, &r));
  if (r == NULL) return;
  bool ok = false;
  uint64_t held = 0;
  int64_t delay = -1;
  CHECK_OK(rk_reservation_ok(r, &ok));
  CHECK_OK(rk_reservation_tokens(r, &held));
  CHECK_OK(rk_reservation_delay_micros(r, &delay));
  CHECK(ok);
  CHECK_I64(held, 1);
  CHECK_I64(delay, 100000);
  /* Taken from the future: the bucket is a token short. */
  CHECK_DOUBLE(tokens(bucket), -1.0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 40000));
  CHECK_OK(rk_reservation_delay_micros(r, &delay));
  CHECK_I64(delay, 60000);
  /* Cancelled before its time: the token comes back (40 ms of refill on
   * top). Cancelling again changes nothing. */
  CHECK_OK(rk_reservation_cancel(r));
  CHECK_OK(rk_reservation_tokens(r, &held));
  CHECK_I64(held, 0);
  double after = tokens(bucket);
  CHECK(fabs(after - 0.4) < 1e-12);
  CHECK_OK(rk_reservation_cancel(r));
  CHECK_DOUBLE(tokens(bucket), after);
  rk_reservation_free(r);

  /* More than the burst: refused, never, holding nothing; still a
   * reservation to free. */
  rk_reservation *refused = NULL;
  CHECK_OK(rk_token_bucket_reserve(bucket, 2, &refused));
  CHECK_OK(rk_reservation_ok(refused, &ok));
  CHECK_OK(rk_reservation_delay_micros(refused, &delay));
  CHECK_OK(rk_reservation_tokens(refused, &held));
  CHECK(!ok);
  CHECK_I64(delay, RK_NEVER);
  CHECK_I64(held, 0);
  CHECK_DOUBLE(tokens(bucket), after);

  /* A reservation keeps its bucket alive. */
  rk_reservation *kept = NULL;
  CHECK_OK(rk_token_bucket_reserve(bucket, 1, &kept));
  rk_limiter_free(bucket);
  CHECK_OK(rk_reservation_delay_micros(kept, &delay));
  CHECK_I64(delay, 60000);
  CHECK_OK(rk_reservation_cancel(kept));
  rk_reservation_free(kept);
  rk_reservation_free(refused);
  rk_reservation_free(NULL);
  rk_manual_clock_free(clock);
}

/* Go's WaitN with a deadline; and the same without the sleep. */
static void token_bucket_waits(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *bucket = NULL;
  must(rk_limiter_new_token_bucket(4.0, 1, clock, &bucket), &bucket);
  rk_decision d;
  CHECK_OK(rk_token_bucket_wait(bucket, 1, 0, &d));
  CHECK(d.allowed);
  CHECK_I64(d.wait_micros, 0);
  /* The next token is 250 ms away. */
  CHECK_OK(rk_token_bucket_wait(bucket, 1, 249999, &d));
  CHECK(!d.allowed);
  CHECK_OK(rk_token_bucket_wait(bucket, 1, -5, &d)); /* negative: do not wait */
  CHECK(!d.allowed);
  CHECK_I64(now_micros(clock), 0);
  /* Without the sleep: taken now, acted on later. */
  CHECK_OK(rk_token_bucket_reserve_within(bucket, 1, 250000, &d));
  CHECK(d.allowed);
  CHECK_I64(d.wait_micros, 250000);
  CHECK_I64(now_micros(clock), 0);
  /* With it: the manual clock moves by the wait. */
  CHECK_OK(rk_token_bucket_wait(bucket, 1, INT64_MAX, &d));
  CHECK(d.allowed);
  CHECK_I64(d.wait_micros, 500000);
  CHECK_I64(now_micros(clock), 500000);
  /* Above the burst: refused whatever the deadline. */
  CHECK_OK(rk_token_bucket_wait(bucket, 2, INT64_MAX, &d));
  CHECK(!d.allowed);
  rk_limiter_free(bucket);
  rk_manual_clock_free(clock);
}

/* redis-cell's CL.THROTTLE key 4 1 1: one per second, 5 at once. */
static void gcra(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *g = NULL;
  must(rk_limiter_new_gcra(4, 1, 1000000, clock, &g), &g);
  uint64_t limit = 0;
  CHECK_OK(rk_gcra_limit(g, &limit));
  CHECK_I64(limit, 5);
  for (uint64_t i = 0; i < 5; i++) {
    rk_decision d = check(g, 1);
    CHECK(d.allowed);
    CHECK_I64(d.limit, 5);
    CHECK_I64(d.remaining, 4 - i);
  }
  rk_decision d = check(g, 1);
  CHECK(!d.allowed);
  CHECK_I64(d.remaining, 0);
  CHECK_I64(d.retry_after_micros, 1000000);
  CHECK_I64(check(g, 6).retry_after_micros, RK_NEVER);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  CHECK(check(g, 1).allowed);
  CHECK(!check(g, 1).allowed);
  rk_limiter_free(g);
  rk_manual_clock_free(clock);
}

static uint64_t level(const rk_limiter *meter) {
  uint64_t l = 777;
  CHECK_OK(rk_leaky_bucket_meter_level(meter, &l));
  return l;
}

/* 3 units, leaking 1 per 100 ms. */
static void leaky_bucket_meter(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *meter = NULL;
  must(rk_limiter_new_leaky_bucket_meter(3, 1, 100000, clock, &meter), &meter);
  CHECK_I64(level(meter), 0);
  CHECK(check(meter, 3).allowed);
  CHECK_I64(level(meter), 3);
  rk_decision d = check(meter, 1);
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, 100000);
  CHECK_I64(level(meter), 3);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 100000));
  CHECK_I64(level(meter), 2);
  CHECK(check(meter, 1).allowed);
  CHECK_I64(check(meter, 4).retry_after_micros, RK_NEVER);
  rk_limiter_free(meter);
  rk_manual_clock_free(clock);
}

/* One unit per 100 ms, 2 may wait. */
static void leaky_bucket_queue(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *queue = NULL;
  must(rk_limiter_new_leaky_bucket_queue(2, 100000, clock, &queue), &queue);
  const int64_t waits[] = {0, 100000, 200000};
  for (size_t i = 0; i < 3; i++) {
    rk_decision d = check(queue, 1);
    CHECK(d.allowed);
    CHECK_I64(d.limit, 3);
    CHECK_I64(d.wait_micros, waits[i]);
  }
  CHECK(!check(queue, 1).allowed); /* a fourth would make three wait */
  CHECK_I64(now_micros(clock), 0);  /* check never sleeps */
  rk_limiter_free(queue);

  /* acquire sleeps until the slot: on a manual clock, moves it. */
  must(rk_limiter_new_leaky_bucket_queue(2, 100000, clock, &queue), &queue);
  rk_decision d;
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue, 1, &d));
  CHECK_I64(d.wait_micros, 0);
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue, 1, &d));
  CHECK(d.allowed);
  CHECK_I64(d.wait_micros, 100000);
  CHECK_I64(now_micros(clock), 100000);
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue, 5, &d)); /* above the capacity: refused at once */
  CHECK(!d.allowed);
  CHECK_I64(now_micros(clock), 100000);
  rk_limiter_free(queue);

  /* Uber's slack: after one request and a pause of a second, two saved
   * slots go at once, then the queue spaces requests again. */
  must(rk_limiter_new_leaky_bucket_queue_with_slack(2, 100000, 2, clock, &queue), &queue);
  CHECK_I64(check(queue, 1).wait_micros, 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  const int64_t slack_waits[] = {0, 0, 0, 100000};
  for (size_t i = 0; i < 4; i++) CHECK_I64(check(queue, 1).wait_micros, slack_waits[i]);
  rk_limiter_free(queue);
  rk_manual_clock_free(clock);
}

static void windows(void) {
  rk_manual_clock *clock = new_clock();
  /* Fixed: 3 per aligned second (the vector fixed_window/counts-per-window). */
  rk_limiter *fixed = NULL;
  must(rk_limiter_new_fixed_window(3, 1000000, clock, &fixed), &fixed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 250000));
  rk_decision d = check(fixed, 2);
  CHECK_DECISION(d, true, 3, 1, 0, 750000, 0, 1000000);
  d = check(fixed, 1);
  CHECK_DECISION(d, true, 3, 0, 0, 750000, 0, 1000000);
  d = check(fixed, 1);
  CHECK_DECISION(d, false, 3, 0, 750000, 750000, 0, 1000000);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 750000));
  d = peek(fixed, 0);
  CHECK_DECISION(d, true, 3, 3, 0, 0, 0, 1000000);
  rk_limiter_free(fixed);

  /* Sliding log: exactly 2 in any 10 ms. */
  rk_limiter *log = NULL;
  must(rk_limiter_new_sliding_log(2, 10000, clock, &log), &log);
  CHECK(check(log, 2).allowed);
  d = check(log, 1);
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, 10000);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 9999));
  CHECK(!check(log, 1).allowed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1));
  CHECK(check(log, 2).allowed);
  rk_limiter_free(log);

  /* Sliding window: 4 per 1000 µs in 4 sub-windows of 250 µs. */
  rk_limiter *sliding = NULL;
  must(rk_limiter_new_sliding_window(4, 1000, 4, clock, &sliding), &sliding);
  CHECK(check(sliding, 3).allowed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 250));
  CHECK(check(sliding, 1).allowed);
  CHECK(!check(sliding, 1).allowed);
  /* The first sub-window's 3 slide out at 1000 µs, the second's 1 later. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 750));
  d = check(sliding, 3);
  CHECK(d.allowed);
  CHECK_I64(d.remaining, 0);
  rk_limiter_free(sliding);

  /* Sliding window counter: 10 per 1000 µs, the previous window weighted
   * by how much of it the sliding window still covers. */
  rk_limiter *counter = NULL;
  must(rk_limiter_new_sliding_window_counter(10, 1000, clock, &counter), &counter);
  CHECK(check(counter, 10).allowed);
  CHECK(!check(counter, 1).allowed);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1500)); /* half of the previous window still counts: 5 */
  d = peek(counter, 0);
  CHECK_I64(d.remaining, 5);
  CHECK(check(counter, 5).allowed);
  CHECK(!check(counter, 1).allowed);
  rk_limiter_free(counter);
  rk_manual_clock_free(clock);
}

/* A window's limit changes at run time, keeping what it has counted: a
 * lower limit refuses until the count is under it (a free look is still
 * admitted), a higher one admits the difference at once. */
static void window_limits(void) {
  rk_manual_clock *clock = new_clock();
  rk_limiter *windows[4] = {NULL, NULL, NULL, NULL};
  must(rk_limiter_new_fixed_window(4, 1000000, clock, &windows[0]), &windows[0]);
  must(rk_limiter_new_sliding_window(4, 1000000, 2, clock, &windows[1]), &windows[1]);
  must(rk_limiter_new_sliding_log(4, 1000000, clock, &windows[2]), &windows[2]);
  must(rk_limiter_new_sliding_window_counter(4, 1000000, clock, &windows[3]), &windows[3]);
  for (size_t k = 0; k < 4; k++) {
    rk_limiter *w = windows[k];
    CHECK(check(w, 3).allowed);
    CHECK_OK(rk_window_set_limit(w, 2));
    rk_decision d = check(w, 1);
    CHECK(!d.allowed);
    CHECK_I64(d.limit, 2);
    CHECK_I64(d.remaining, 0);
    CHECK(peek(w, 0).allowed);
    CHECK_OK(rk_window_set_limit(w, 5));
    CHECK(check(w, 2).allowed);
    CHECK(!check(w, 1).allowed);
    uint64_t limit = 0;
    CHECK_OK(rk_window_limit(w, &limit));
    CHECK_I64(limit, 5);
    rk_limiter_free(w);
  }
  rk_manual_clock_free(clock);
}

/* Each typed constructor makes the limiter its spec describes: the same
 * decisions, step by step, on two clocks moved alike. */
static void typed_constructors_agree_with_specs(void) {
  const rk_limiter_spec specs[] = {
      {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 3.5, .burst = 4},
      {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 3, .count_per_period = 2, .period_micros = 70000},
      {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER, .capacity = 5, .count_per_period = 2, .period_micros = 90000},
      {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = 3, .interval_micros = 45000},
      {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = 2, .interval_micros = 30000, .slack = 4},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 4, .window_micros = 200000},
      {.algorithm = RK_ALGORITHM_SLIDING_WINDOW, .limit = 5, .window_micros = 200000, .sub_windows = 8},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 4, .window_micros = 150000},
      {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 6, .window_micros = 120000},
  };
  const char *names[] = {"token_bucket",   "gcra",        "leaky_bucket_meter",    "leaky_bucket_queue", "leaky_bucket_queue",
                         "fixed_window",   "sliding_window", "sliding_log",       "sliding_window_counter"};
  for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
    const rk_limiter_spec *s = &specs[k];
    rk_manual_clock *clock_a = new_clock(), *clock_b = new_clock();
    rk_limiter *a = NULL, *b = NULL;
    must(rk_limiter_new(s, clock_a, &a), &a);
    switch (s->algorithm) {
      case RK_ALGORITHM_TOKEN_BUCKET: CHECK_OK(rk_limiter_new_token_bucket(s->rate, s->burst, clock_b, &b)); break;
      case RK_ALGORITHM_GCRA:
        CHECK_OK(rk_limiter_new_gcra(s->max_burst, s->count_per_period, s->period_micros, clock_b, &b));
        break;
      case RK_ALGORITHM_LEAKY_BUCKET_METER:
        CHECK_OK(rk_limiter_new_leaky_bucket_meter(s->capacity, s->count_per_period, s->period_micros, clock_b, &b));
        break;
      case RK_ALGORITHM_LEAKY_BUCKET_QUEUE:
        if (s->slack == 0) {
          CHECK_OK(rk_limiter_new_leaky_bucket_queue(s->capacity, s->interval_micros, clock_b, &b));
        } else {
          CHECK_OK(rk_limiter_new_leaky_bucket_queue_with_slack(s->capacity, s->interval_micros, s->slack, clock_b, &b));
        }
        break;
      case RK_ALGORITHM_FIXED_WINDOW: CHECK_OK(rk_limiter_new_fixed_window(s->limit, s->window_micros, clock_b, &b)); break;
      case RK_ALGORITHM_SLIDING_WINDOW:
        CHECK_OK(rk_limiter_new_sliding_window(s->limit, s->window_micros, s->sub_windows, clock_b, &b));
        break;
      case RK_ALGORITHM_SLIDING_LOG: CHECK_OK(rk_limiter_new_sliding_log(s->limit, s->window_micros, clock_b, &b)); break;
      default: CHECK_OK(rk_limiter_new_sliding_window_counter(s->limit, s->window_micros, clock_b, &b)); break;
    }
    must(RK_OK, &b);
    rk_algorithm algorithm_a = 0, algorithm_b = 0;
    CHECK_OK(rk_limiter_algorithm(a, &algorithm_a));
    CHECK_OK(rk_limiter_algorithm(b, &algorithm_b));
    CHECK_I64(algorithm_a, s->algorithm);
    CHECK_I64(algorithm_b, s->algorithm);
    CHECK_STR(rk_algorithm_name(algorithm_a), names[k]);
    int differing = 0, allowed = 0, refused = 0;
    for (int64_t i = 0; i < 60; i++) {
      int64_t cost = 1 + (i * 7) % 3;
      rk_decision da = check(a, cost), db = check(b, cost);
      differing += !same_decision(&da, &db);
      allowed += da.allowed;
      refused += !da.allowed;
      CHECK_OK(rk_manual_clock_advance_micros(clock_a, 5000 + (i % 4) * 9000));
      CHECK_OK(rk_manual_clock_advance_micros(clock_b, 5000 + (i % 4) * 9000));
    }
    CHECK_I64(differing, 0);
    /* The schedule exercised both answers. */
    CHECK(allowed > 0 && refused > 0);
    rk_limiter_free(a);
    rk_limiter_free(b);
    rk_manual_clock_free(clock_a);
    rk_manual_clock_free(clock_b);
  }
  CHECK_STR(rk_algorithm_name(0), NULL);
  CHECK_STR(rk_algorithm_name(9), NULL);
}

static double seconds_since(const struct timespec *start) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* Without a manual clock, the queue's acquire and the bucket's wait really
 * sleep. */
static void real_clock(void) {
  rk_limiter *queue = NULL, *bucket = NULL;
  must(rk_limiter_new_leaky_bucket_queue(5, 20000, NULL, &queue), &queue);
  must(rk_limiter_new_token_bucket(50.0, 1, NULL, &bucket), &bucket);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  rk_decision first, second;
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue, 1, &first));
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue, 1, &second));
  double elapsed = seconds_since(&start);
  CHECK(first.allowed && second.allowed);
  CHECK_I64(first.wait_micros, 0);
  /* The second slot is 20 ms after the first, less the time between the
   * calls (which valgrind can stretch). */
  CHECK(second.wait_micros > 0 && second.wait_micros <= 20000);
  CHECK(elapsed >= (double)second.wait_micros / 1e6 - 0.001);

  clock_gettime(CLOCK_MONOTONIC, &start);
  CHECK_OK(rk_token_bucket_wait(bucket, 1, 0, &first));
  CHECK_OK(rk_token_bucket_wait(bucket, 1, 1000000, &second));
  elapsed = seconds_since(&start);
  CHECK(first.allowed && second.allowed);
  CHECK(second.wait_micros > 0 && second.wait_micros <= 20000);
  CHECK(elapsed >= (double)second.wait_micros / 1e6 - 0.001);
  rk_limiter_free(queue);
  rk_limiter_free(bucket);
}

int main(void) {
  token_bucket_decisions();
  token_bucket_settings();
  token_bucket_reservations();
  token_bucket_waits();
  gcra();
  leaky_bucket_meter();
  leaky_bucket_queue();
  windows();
  window_limits();
  typed_constructors_agree_with_specs();
  real_clock();
  return check_summary("test_limiters");
}
