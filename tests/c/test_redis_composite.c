/*
 * Refunds and composites through Redis, against a real Redis
 * (RATEKEEPER_REDIS_URL, set by tests/redis/with-redis):
 *
 * 1. rk_redis_limiter_refund, each algorithm: a refund gives a unit back
 *    (a refused request is admitted after it), and however much is given
 *    back no key holds more than its limit; bad input is a status.
 * 2. rk_redis_composite_*: several limits all or nothing (a refusal takes
 *    nothing from the limits that would have admitted, which show their
 *    state untouched), peek takes nothing, refund gives back in every
 *    limit, remove forgets every limit; the async check calls back once
 *    with every part; bad input and unsupported algorithms are statuses.
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

static rk_redis_store *store;
static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* Each admits 3 at once and gives nothing back by itself within the test. */
static const rk_limiter_spec SPECS[] = {
    {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 1, .period_micros = 60000000},
    {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 0.001, .burst = 3},
    {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 1000000000000},
    {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 3, .window_micros = 1000000000000},
    {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 1000000000000},
};
#define N_SPECS (sizeof SPECS / sizeof SPECS[0])

static int admitted_of(rk_redis_limiter *l, const char *key, int tries) {
  int admitted = 0;
  for (int i = 0; i < tries; i++) {
    rk_decision d = {0};
    CHECK_OK(rk_redis_limiter_check(l, key, strlen(key), 1, &d));
    admitted += d.allowed;
  }
  return admitted;
}

/* 1. */
static void test_refund(void) {
  for (size_t s = 0; s < N_SPECS; s++) {
    rk_redis_limiter *l = NULL;
    CHECK_OK(rk_redis_limiter_new(store, name("refund"), &SPECS[s], &l));
    if (l == NULL) continue;
    CHECK_I64(admitted_of(l, "k", 4), 3);
    /* The remembered refusal goes with the refund: the next check asks. */
    CHECK_OK(rk_redis_limiter_refund(l, "k", 1, 1));
    CHECK_I64(admitted_of(l, "k", 2), 1);
    /* Never more than the limit, however much comes back. */
    CHECK_OK(rk_redis_limiter_refund(l, "k", 1, INT64_MAX));
    CHECK_OK(rk_redis_limiter_refund(l, "k", 1, 50));
    CHECK_OK(rk_redis_limiter_refund(l, "never-seen", 10, 5));
    CHECK_OK(rk_redis_limiter_refund(l, "k", 1, 0));
    CHECK_I64(admitted_of(l, "k", 5), 3);
    CHECK_I64(admitted_of(l, "never-seen", 5), 3);

    CHECK_STATUS(rk_redis_limiter_refund(l, "k", 1, -1), RK_INVALID_ARGUMENT);
    CHECK(strcmp(rk_last_error_argument(), "cost") == 0);
    CHECK_STATUS(rk_redis_limiter_refund(NULL, "k", 1, 1), RK_NULL_POINTER);
    CHECK_STATUS(rk_redis_limiter_refund(l, NULL, 1, 1), RK_NULL_POINTER);
    static char long_key[300];
    memset(long_key, 'x', sizeof long_key);
    CHECK_STATUS(rk_redis_limiter_refund(l, long_key, sizeof long_key, 1), RK_INVALID_ARGUMENT);
    CHECK(strcmp(rk_last_error_argument(), "key") == 0);
    rk_redis_limiter_free(l);
  }
}

/* The composite's parts from an _async check. */
struct parts_waiter {
  struct waiter w;
  rk_decision parts[N_SPECS];
  size_t parts_len;
};

static void on_parts(void *user_data, rk_status status, const rk_decision *decision, const rk_decision *parts,
                     size_t parts_len) {
  struct parts_waiter *p = user_data;
  if (decision != NULL) {
    p->w.has_decision = true;
    p->w.decision = *decision;
  }
  p->parts_len = parts_len;
  for (size_t i = 0; i < parts_len && i < N_SPECS; i++) p->parts[i] = parts[i];
  waiter_finish(&p->w, status);
}

/* 2. Every algorithm at once; the fixed window allows 5 where the others
   allow 3. */
static void test_composite(void) {
  rk_limiter_spec specs[N_SPECS];
  memcpy(specs, SPECS, sizeof specs);
  specs[2].limit = 5;
  rk_redis_composite_limiter *c = NULL;
  CHECK_OK(rk_redis_composite_new(store, name("composite"), specs, N_SPECS, &c));
  if (c == NULL) return;
  size_t len = 0;
  CHECK_OK(rk_redis_composite_len(c, &len));
  CHECK_I64((int64_t)len, (int64_t)N_SPECS);

  rk_decision d = {0}, parts[N_SPECS];
  CHECK_OK(rk_redis_composite_check(c, "k", 1, 3, &d, parts, N_SPECS));
  CHECK(d.allowed);
  CHECK_I64((int64_t)d.remaining, 0);
  CHECK_I64((int64_t)parts[2].remaining, 2);
  /* Refused by all but the fixed window, which keeps its 2. */
  for (int i = 0; i < 3; i++) {
    CHECK_OK(rk_redis_composite_check(c, "k", 1, 1, &d, parts, N_SPECS));
    CHECK(!d.allowed);
    CHECK(d.retry_after_micros > 0);
    CHECK(parts[2].allowed);
    CHECK_I64((int64_t)parts[2].remaining, 2);
  }
  /* A peek takes nothing, admitted or not. */
  for (int i = 0; i < 3; i++) {
    CHECK_OK(rk_redis_composite_peek(c, "other", 5, 3, &d, NULL, 0));
    CHECK(d.allowed);
  }
  /* The refund gives one back in every limit: the fixed window too. */
  CHECK_OK(rk_redis_composite_refund(c, "k", 1, 1));
  CHECK_OK(rk_redis_composite_check(c, "k", 1, 1, &d, parts, N_SPECS));
  CHECK(d.allowed);
  CHECK_I64((int64_t)parts[2].remaining, 2);
  /* Never more than each limit after a huge refund. */
  CHECK_OK(rk_redis_composite_refund(c, "k", 1, INT64_MAX));
  CHECK_OK(rk_redis_composite_check(c, "k", 1, 3, &d, parts, N_SPECS));
  CHECK(d.allowed);
  CHECK_I64((int64_t)parts[2].remaining, 2);
  CHECK_OK(rk_redis_composite_check(c, "k", 1, 1, &d, NULL, 0));
  CHECK(!d.allowed);

  /* Async: once, with every part. */
  struct parts_waiter p;
  waiter_init(&p.w, NULL);
  CHECK_OK(rk_redis_composite_check_async(c, "async", 5, 2, on_parts, &p));
  CHECK(waiter_wait(&p.w, 5.0));
  CHECK_I64(p.w.calls, 1);
  CHECK(p.w.status == RK_OK && p.w.has_decision && p.w.decision.allowed);
  CHECK_I64((int64_t)p.parts_len, (int64_t)N_SPECS);
  CHECK_I64((int64_t)p.parts[2].remaining, 3);
  waiter_destroy(&p.w);

  bool removed = false;
  CHECK_OK(rk_redis_composite_remove(c, "k", 1, &removed));
  CHECK(removed);
  CHECK_OK(rk_redis_composite_remove(c, "never-seen", 10, &removed));
  CHECK(!removed);
  CHECK_OK(rk_redis_composite_check(c, "k", 1, 3, &d, NULL, 0));
  CHECK(d.allowed);

  /* Bad input: a status, nothing sent. */
  CHECK_STATUS(rk_redis_composite_check(c, "k", 1, 1, &d, parts, 2), RK_BUFFER_TOO_SMALL);
  CHECK_STATUS(rk_redis_composite_check(c, "k", 1, 1, &d, NULL, N_SPECS), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_composite_check(c, "k", 1, -1, &d, NULL, 0), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_redis_composite_peek(c, "k", 1, 1, NULL, NULL, 0), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_composite_refund(c, "k", 1, -1), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_redis_composite_check_async(c, "k", 1, 1, NULL, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_composite_set_when_unavailable(c, RK_WHEN_UNAVAILABLE_LOCAL_SHARE), RK_INVALID_ARGUMENT);
  CHECK_OK(rk_redis_composite_set_when_unavailable(c, RK_WHEN_UNAVAILABLE_FAIL_OPEN));
  CHECK_OK(rk_redis_composite_set_max_key_bytes(c, 2));
  CHECK_STATUS(rk_redis_composite_check(c, "abc", 3, 1, &d, NULL, 0), RK_INVALID_ARGUMENT);
  CHECK(strcmp(rk_last_error_argument(), "key") == 0);
  CHECK_STATUS(rk_redis_composite_set_max_key_bytes(c, 0), RK_INVALID_ARGUMENT);
  rk_redis_composite_free(c);
  rk_redis_composite_free(NULL);

  rk_redis_composite_limiter *bad = NULL;
  CHECK_STATUS(rk_redis_composite_new(store, name("none"), specs, 0, &bad), RK_INVALID_ARGUMENT);
  CHECK(strcmp(rk_last_error_argument(), "limits_len") == 0);
  rk_limiter_spec invalid[2] = {specs[0], {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 1, .window_micros = 0}};
  CHECK_STATUS(rk_redis_composite_new(store, name("invalid"), invalid, 2, &bad), RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "limits[1]") != NULL);
  rk_limiter_spec queue[2] = {
      specs[0], {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = 1, .interval_micros = 1000, .slack = 0}};
  CHECK_STATUS(rk_redis_composite_new(store, name("queue"), queue, 2, &bad), RK_UNSUPPORTED);
  CHECK(strstr(rk_last_error_message(), "limits[1]") != NULL);
  CHECK_STATUS(rk_redis_composite_new(store, name("null"), NULL, 2, &bad), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_composite_new(NULL, name("null"), specs, 2, &bad), RK_NULL_POINTER);
  CHECK(bad == NULL);
}

int main(void) {
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &store));
  if (store == NULL) return check_summary("test_redis_composite");
  test_refund();
  test_composite();
  rk_redis_store_free(store);
  return check_summary("test_redis_composite");
}
