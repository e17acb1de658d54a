/*
 * The concurrency limit shared through Redis (rk_redis_concurrency_limiter)
 * against a real Redis (RATEKEEPER_REDIS_URL, set by tests/redis/with-redis).
 * The semantics are the Rust crate's, tested there with holders killed by
 * kill -9; here, that the C binding passes them through:
 *
 * 1. At most the limit held by two handles of one name; a lease released
 *    exactly once; a renewal of a live lease only.
 * 2. A holder that never releases: its permits come back at its expiry.
 * 3. Weighted leases, and more than the limit refused with RK_NEVER.
 * 4. Invalid arguments: RK_INVALID_ARGUMENT naming them, RK_NULL_POINTER,
 *    nothing written.
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

static rk_redis_store *store;
static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* 1. */
static void test_limit_and_exactly_once(void) {
  const char *n = name("concurrency");
  rk_redis_concurrency_limiter *a = NULL, *b = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_new(store, n, 2, 60000000, &a));
  CHECK_OK(rk_redis_concurrency_limiter_new(store, n, 2, 60000000, &b));
  if (a == NULL || b == NULL) return;
  rk_decision d = {0};
  rk_redis_concurrency_lease *first = NULL, *second = NULL, *none = (void *)1;
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(a, 1, &d, &first));
  CHECK(d.allowed && d.remaining == 1 && first != NULL);
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(b, 1, &d, &second));
  CHECK(d.allowed && d.remaining == 0 && second != NULL);
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(a, 1, &d, &none));
  CHECK(!d.allowed && none == NULL);
  CHECK(d.retry_after_micros > 59000000 && d.retry_after_micros <= 60000000);
  CHECK(strcmp(rk_redis_concurrency_lease_id(first), rk_redis_concurrency_lease_id(second)) != 0);
  CHECK_I64((int64_t)rk_redis_concurrency_lease_permits(first), 1);
  CHECK(rk_redis_concurrency_lease_recorded(first));
  uint64_t held = 0;
  CHECK_OK(rk_redis_concurrency_limiter_held(a, &held));
  CHECK_I64((int64_t)held, 2);
  bool released = false, renewed = true;
  CHECK_OK(rk_redis_concurrency_limiter_release(b, first, &released));
  CHECK(released);
  CHECK_OK(rk_redis_concurrency_limiter_release(a, first, &released));
  CHECK(!released);
  CHECK_OK(rk_redis_concurrency_limiter_renew(a, first, &renewed));
  CHECK(!renewed);
  CHECK_OK(rk_redis_concurrency_limiter_renew(a, second, &renewed));
  CHECK(renewed);
  CHECK_OK(rk_redis_concurrency_limiter_held(b, &held));
  CHECK_I64((int64_t)held, 1);
  CHECK_OK(rk_redis_concurrency_limiter_release(a, second, &released));
  CHECK(released);
  rk_redis_concurrency_lease_free(first);
  rk_redis_concurrency_lease_free(second);
  rk_redis_concurrency_limiter_free(a);
  rk_redis_concurrency_limiter_free(b);
}

/* 2. */
static void test_a_dead_holders_lease_comes_back(void) {
  rk_redis_concurrency_limiter *l = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_new(store, name("expiry"), 1, 100000, &l));
  if (l == NULL) return;
  rk_decision d = {0};
  rk_redis_concurrency_lease *dead = NULL, *next = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 1, &d, &dead));
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 1, &d, &next));
  CHECK(!d.allowed && next == NULL);
  sleep_micros(150000);
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 1, &d, &next));
  CHECK(d.allowed && next != NULL);
  bool released = true;
  CHECK_OK(rk_redis_concurrency_limiter_release(l, dead, &released));
  CHECK(!released);
  CHECK_OK(rk_redis_concurrency_limiter_release(l, next, &released));
  CHECK(released);
  rk_redis_concurrency_lease_free(dead);
  rk_redis_concurrency_lease_free(next);
  rk_redis_concurrency_limiter_free(l);
}

/* 3. */
static void test_weights(void) {
  rk_redis_concurrency_limiter *l = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_new(store, name("weights"), 5, 60000000, &l));
  if (l == NULL) return;
  rk_decision d = {0};
  rk_redis_concurrency_lease *three = NULL, *none = NULL;
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 3, &d, &three));
  CHECK(d.allowed && d.remaining == 2);
  CHECK_I64((int64_t)rk_redis_concurrency_lease_permits(three), 3);
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 3, &d, &none));
  CHECK(!d.allowed && none == NULL);
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 6, NULL, &none));
  CHECK_OK(rk_redis_concurrency_limiter_try_acquire(l, 6, &d, &none));
  CHECK(!d.allowed && d.retry_after_micros == RK_NEVER);
  bool released = false;
  CHECK_OK(rk_redis_concurrency_limiter_release(l, three, &released));
  CHECK(released);
  rk_redis_concurrency_lease_free(three);
  rk_redis_concurrency_limiter_free(l);
}

/* 4. */
static void test_invalid_arguments(void) {
  rk_redis_concurrency_limiter *l = NULL;
  CHECK_STATUS(rk_redis_concurrency_limiter_new(store, "x", 0, 1000000, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "limit");
  CHECK_STATUS(rk_redis_concurrency_limiter_new(store, "x", 1, 999, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "lease_ttl_micros");
  CHECK(l == NULL);
  CHECK_STATUS(rk_redis_concurrency_limiter_new(NULL, "x", 1, 1000000, &l), RK_NULL_POINTER);
  CHECK_OK(rk_redis_concurrency_limiter_new(store, name("args"), 1, 1000000, &l));
  if (l == NULL) return;
  rk_redis_concurrency_lease *lease = NULL;
  rk_decision d = {0};
  CHECK_STATUS(rk_redis_concurrency_limiter_try_acquire(l, 0, &d, &lease), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STATUS(rk_redis_concurrency_limiter_try_acquire(l, -1, &d, &lease), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STATUS(rk_redis_concurrency_limiter_try_acquire(l, 1, &d, NULL), RK_NULL_POINTER);
  CHECK(lease == NULL);
  bool released = false;
  CHECK_STATUS(rk_redis_concurrency_limiter_release(l, NULL, &released), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_concurrency_limiter_set_when_unavailable(l, RK_WHEN_UNAVAILABLE_LOCAL_SHARE),
               RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "policy");
  CHECK_OK(rk_redis_concurrency_limiter_set_when_unavailable(l, RK_WHEN_UNAVAILABLE_FAIL_CLOSED));
  CHECK(rk_redis_concurrency_lease_id(NULL) == NULL);
  rk_redis_concurrency_lease_free(NULL);
  rk_redis_concurrency_limiter_free(l);
  rk_redis_concurrency_limiter_free(NULL);
}

int main(void) {
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &store));
  if (store == NULL) return check_summary("test_redis_concurrency");
  test_limit_and_exactly_once();
  test_a_dead_holders_lease_comes_back();
  test_weights();
  test_invalid_arguments();
  rk_redis_store_free(store);
  return check_summary("test_redis_concurrency");
}
