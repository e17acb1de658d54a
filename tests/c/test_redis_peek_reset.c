/*
 * Peek (what the next check would answer, taking nothing) and remove/reset
 * on every Redis limiter, against a real Redis (RATEKEEPER_REDIS_URL, set
 * by tests/redis/with-redis):
 *
 * 1. Exact mode, each algorithm: peeks before every check equal the check
 *    that follows and take nothing (the full limit is still admitted);
 *    remove gives the whole limit back, an unknown key is false.
 * 2. Leased mode: the same, counting this node's lease; remove drops it.
 * 3. Divided mode: peek and remove on the local share.
 * 4. Guava's shared limiter: inspect reads the state; reset starts afresh.
 * 5. Concurrency: peek is the next acquire's decision; reset frees all.
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

static rk_redis_store *store;
static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* Each admits 3 at once and gives nothing back within the test. */
static const rk_limiter_spec SPECS[] = {
    {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 1, .period_micros = 60000000},
    {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 0.001, .burst = 3},
    {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 1000000000000},
    {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 3, .window_micros = 1000000000000},
    {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 1000000000000},
};
#define N_SPECS (sizeof SPECS / sizeof SPECS[0])

/* 1. */
static void test_exact(void) {
  for (size_t s = 0; s < N_SPECS; s++) {
    rk_redis_limiter *l = NULL;
    CHECK_OK(rk_redis_limiter_new(store, name("exact"), &SPECS[s], &l));
    for (int k = 0; k < 5; k++) {
      rk_decision peeked = {0}, again = {0}, checked = {0};
      CHECK_OK(rk_redis_limiter_peek(l, "k", 1, 1, &peeked));
      for (int i = 0; i < 5; i++) CHECK_OK(rk_redis_limiter_peek(l, "k", 1, 1, &again));
      CHECK_OK(rk_redis_limiter_check(l, "k", 1, 1, &checked));
      CHECK(peeked.allowed == checked.allowed);
      CHECK_I64((int64_t)peeked.remaining, (int64_t)checked.remaining);
      CHECK(checked.allowed == (k < 3));
    }
    bool removed = false;
    CHECK_OK(rk_redis_limiter_remove(l, "k", 1, &removed));
    CHECK(removed);
    int admitted = 0;
    for (int i = 0; i < 5; i++) {
      rk_decision d = {0};
      CHECK_OK(rk_redis_limiter_check(l, "k", 1, 1, &d));
      admitted += d.allowed;
    }
    CHECK_I64(admitted, 3);
    CHECK_OK(rk_redis_limiter_remove(l, "never-seen", 10, &removed));
    CHECK(!removed);
    CHECK_OK(rk_redis_limiter_remove(l, "k", 1, NULL));
    CHECK(rk_redis_limiter_remove(NULL, "k", 1, &removed) == RK_NULL_POINTER);
    rk_redis_limiter_free(l);
  }
}

/* 2. */
static void test_leased(void) {
  for (size_t s = 0; s < 2; s++) {
    rk_redis_leased_limiter *l = NULL;
    CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &SPECS[s], 2, 60000000, &l));
    for (int k = 0; k < 5; k++) {
      rk_decision peeked = {0}, checked = {0};
      CHECK_OK(rk_redis_leased_limiter_peek(l, "k", 1, 1, &peeked));
      CHECK_OK(rk_redis_leased_limiter_check(l, "k", 1, 1, &checked));
      CHECK(peeked.allowed == checked.allowed);
      CHECK_I64((int64_t)peeked.remaining, (int64_t)checked.remaining);
      CHECK(checked.allowed == (k < 3));
    }
    bool removed = false;
    CHECK_OK(rk_redis_leased_limiter_remove(l, "k", 1, &removed));
    CHECK(removed);
    rk_decision d = {0};
    CHECK_OK(rk_redis_leased_limiter_check(l, "k", 1, 1, &d)); /* leases 2, spends 1 */
    CHECK(d.allowed);
    CHECK_OK(rk_redis_leased_limiter_remove(l, "k", 1, &removed));
    CHECK(removed);
    int admitted = 0;
    for (int i = 0; i < 6; i++) {
      CHECK_OK(rk_redis_leased_limiter_check(l, "k", 1, 1, &d));
      admitted += d.allowed;
    }
    CHECK_I64(admitted, 3); /* the whole limit, and no unit of the dropped lease */
    rk_redis_leased_limiter_free(l);
  }
}

/* 3. */
static void test_divided(void) {
  rk_redis_divided_limiter *l = NULL;
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &SPECS[2], 5000000, 100, &l));
  for (int k = 0; k < 5; k++) {
    rk_decision peeked = {0}, checked = {0};
    CHECK_OK(rk_redis_divided_limiter_peek(l, "k", 1, 1, &peeked));
    CHECK_OK(rk_redis_divided_limiter_peek(l, "k", 1, 1, &peeked));
    CHECK_OK(rk_redis_divided_limiter_check(l, "k", 1, 1, &checked));
    CHECK(peeked.allowed == checked.allowed);
    CHECK_I64((int64_t)peeked.remaining, (int64_t)checked.remaining);
    CHECK(checked.allowed == (k < 3));
  }
  bool removed = false;
  CHECK_OK(rk_redis_divided_limiter_remove(l, "k", 1, &removed));
  CHECK(removed);
  CHECK_OK(rk_redis_divided_limiter_remove(l, "k", 1, &removed));
  CHECK(!removed);
  rk_redis_divided_limiter_free(l);
}

/* 4. */
static void test_guava(void) {
  rk_redis_rate_limiter *l = NULL;
  /* A permit every 10 s: the waits below are far from any machine's delays. */
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("guava"), 0.1, 1.0, 0, &l));
  rk_redis_rate_limiter_state state = {0};
  CHECK_OK(rk_redis_rate_limiter_inspect(l, &state));
  CHECK_DOUBLE(state.rate, 0.1);
  CHECK_DOUBLE(state.max_permits, 0.1);
  CHECK(state.stored_permits < 0.05);
  CHECK_I64(state.time_until_available_micros, 0);
  int64_t wait = -1;
  CHECK_OK(rk_redis_rate_limiter_reserve(l, 1, &wait));
  CHECK_I64(wait, 0);
  for (int i = 0; i < 5; i++) {
    CHECK_OK(rk_redis_rate_limiter_inspect(l, &state));
    CHECK(state.time_until_available_micros > 5000000 && state.time_until_available_micros <= 10000000);
  }
  bool reset = false;
  CHECK_OK(rk_redis_rate_limiter_reset(l, &reset));
  CHECK(reset);
  CHECK_OK(rk_redis_rate_limiter_inspect(l, &state));
  CHECK_I64(state.time_until_available_micros, 0);
  CHECK_OK(rk_redis_rate_limiter_reset(l, &reset));
  CHECK(!reset); /* the inspect created nothing */
  CHECK_OK(rk_redis_rate_limiter_reserve(l, 1, &wait));
  CHECK_I64(wait, 0);
  CHECK(rk_redis_rate_limiter_inspect(l, NULL) == RK_NULL_POINTER);
  rk_redis_rate_limiter_free(l);
}

/* 5. */
static void test_concurrency(void) {
  rk_redis_concurrency_limiter *l = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_new(store, name("pool"), 2, 60000000, &l));
  rk_redis_concurrency_lease *leases[3] = {NULL, NULL, NULL};
  for (int k = 0; k < 3; k++) {
    rk_decision peeked = {0}, acquired = {0};
    CHECK_OK(rk_redis_concurrency_limiter_peek(l, 1, &peeked));
    CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 1, &acquired, &leases[k]));
    CHECK(peeked.allowed == acquired.allowed);
    CHECK_I64((int64_t)peeked.remaining, (int64_t)acquired.remaining);
    CHECK(acquired.allowed == (k < 2));
  }
  bool reset = false, released = true;
  CHECK_OK(rk_redis_concurrency_limiter_reset(l, &reset));
  CHECK(reset);
  uint64_t held = 99;
  CHECK_OK(rk_redis_concurrency_limiter_held(l, &held));
  CHECK_I64((int64_t)held, 0);
  CHECK_OK(rk_redis_concurrency_limiter_release(l, leases[0], &released));
  CHECK(!released);
  CHECK(rk_redis_concurrency_limiter_peek(l, -1, &(rk_decision){0}) == RK_INVALID_ARGUMENT);
  CHECK_OK(rk_redis_concurrency_limiter_reset(l, &reset));
  CHECK(!reset);
  for (int k = 0; k < 3; k++) rk_redis_concurrency_lease_free(leases[k]);
  rk_redis_concurrency_limiter_free(l);
}

int main(void) {
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &store));
  if (store == NULL) return check_summary("test_redis_peek_reset");
  test_exact();
  test_leased();
  test_divided();
  test_guava();
  test_concurrency();
  rk_redis_store_free(store);
  return check_summary("test_redis_peek_reset");
}
