/*
 * The distributed limiters against a real Redis (RATEKEEPER_REDIS_URL, set
 * by tests/redis/with-redis):
 *
 * 1. Exact mode: each algorithm that runs in Redis admits its limit and
 *    then refuses with a retry-after; two handles of one name share a key,
 *    other keys and names do not; peek takes nothing; others are
 *    RK_UNSUPPORTED.
 * 2. The _async form: one callback with the decision, on the library's
 *    thread, where blocking calls are RK_UNSUPPORTED; none on a bad call.
 * 3. Threads hammering one handle: exactly the limit, never more.
 * 4. Leased mode: leases come out of the shared limit (an exact handle of
 *    the same name sees them), and the total never exceeds it.
 * 5. Divided mode and membership: the node count, each node's share.
 * 6. Guava's limiter shared through Redis: the waits, rate, joining.
 * 7. Invalid arguments, with nothing sent: RK_INVALID_ARGUMENT naming the
 *    argument, RK_NULL_POINTER, nothing written.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdatomic.h>

#include "redis_support.h"

static rk_redis_store *store;
static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* Checks `key`, of which `taken` units are taken, until refused (at most
 * `max` times); returns how many were admitted, and the refusal in
 * *refusal. */
static int admit_until_refused(const rk_redis_limiter *l, const char *key, int taken, int max, rk_decision *refusal) {
  int admitted = 0;
  for (int i = 0; i < max; i++) {
    rk_decision d = {0};
    rk_status status = rk_redis_limiter_check(l, key, strlen(key), 1, &d);
    CHECK(status == RK_OK);
    if (status != RK_OK) {
      fprintf(stderr, "    %s\n", rk_last_error_message());
      break;
    }
    if (!d.allowed) {
      *refusal = d;
      break;
    }
    CHECK_I64((int64_t)d.remaining, (int64_t)d.limit - taken - admitted - 1);
    admitted++;
  }
  return admitted;
}

/* 1. Exact mode. */
static void test_exact_mode(void) {
  static const struct {
    const char *what;
    rk_limiter_spec spec;
  } specs[] = {
      {"gcra", {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 4, .count_per_period = 1, .period_micros = 60000000}},
      {"token-bucket", {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 0.1, .burst = 5}},
      {"fixed-window", {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 5, .window_micros = 60000000}},
      {"window-counter", {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 5, .window_micros = 60000000}},
      {"sliding-log", {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 5, .window_micros = 60000000}},
  };
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    rk_redis_limiter *a = NULL, *b = NULL, *other = NULL;
    CHECK_OK(rk_redis_limiter_new(store, name(specs[i].what), &specs[i].spec, &a));
    CHECK_OK(rk_redis_limiter_new(store, name(specs[i].what), &specs[i].spec, &b));
    char other_name[200];
    snprintf(other_name, sizeof other_name, "%s-other", name(specs[i].what));
    CHECK_OK(rk_redis_limiter_new(store, other_name, &specs[i].spec, &other));
    uint64_t limit = 0;
    CHECK_OK(rk_redis_limiter_limit(a, &limit));
    CHECK_I64((int64_t)limit, 5);

    rk_decision d = {0};
    CHECK_OK(rk_redis_limiter_peek(a, "user:1", 6, 1, &d));
    CHECK(d.allowed && d.limit == 5 && d.remaining == 4);
    /* Two admitted through one handle, the rest through the other. */
    CHECK_OK(rk_redis_limiter_check(a, "user:1", 6, 2, &d));
    CHECK(d.allowed && d.remaining == 3 && d.retry_after_micros == 0);
    rk_decision refusal = {0};
    int admitted = admit_until_refused(b, "user:1", 2, 10, &refusal);
    if (admitted != 3) fprintf(stderr, "    %s: %d admitted after 2\n", specs[i].what, admitted);
    CHECK(admitted == 3);
    CHECK(!refusal.allowed && refusal.remaining == 0 && refusal.limit == 5);
    /* At most two windows (a window counter's estimate weighs the last). */
    CHECK(refusal.retry_after_micros > 0 && refusal.retry_after_micros <= 120000000);
    if (refusal.retry_after_micros <= 0 || refusal.retry_after_micros > 120000000)
      fprintf(stderr, "    %s: retry_after %" PRId64 "\n", specs[i].what, refusal.retry_after_micros);
    CHECK(refusal.reset_after_micros >= refusal.retry_after_micros);
    /* Remembered or asked again, the refusal stands for the other handle. */
    CHECK_OK(rk_redis_limiter_check(a, "user:1", 6, 1, &d));
    CHECK(!d.allowed);
    CHECK_OK(rk_redis_limiter_set_remember_refusals(a, false));
    CHECK_OK(rk_redis_limiter_check(a, "user:1", 6, 1, &d));
    CHECK(!d.allowed && d.retry_after_micros > 0);
    /* A cost above the limit is never admitted. */
    CHECK_OK(rk_redis_limiter_check(a, "user:2", 6, 6, &d));
    CHECK(!d.allowed && d.retry_after_micros == RK_NEVER);
    /* Other keys, other names: their own limits. */
    CHECK_OK(rk_redis_limiter_check(a, "user:2", 6, 5, &d));
    CHECK(d.allowed && d.remaining == 0);
    CHECK_OK(rk_redis_limiter_check(other, "user:1", 6, 5, &d));
    CHECK(d.allowed);
    /* Keys are bytes: UTF-8 beyond ASCII, and the empty key (more in
     * test_keys). */
    CHECK_OK(rk_redis_limiter_check(a, "\xc3\xa9t\xc3\xa9", 6, 5, &d));
    CHECK(d.allowed && d.remaining == 0);
    CHECK_OK(rk_redis_limiter_check(a, NULL, 0, 5, &d));
    CHECK(d.allowed && d.remaining == 0);
    CHECK_OK(rk_redis_limiter_check(b, "", 0, 1, &d));
    CHECK(!d.allowed);
    rk_redis_limiter_free(a);
    rk_redis_limiter_free(b);
    rk_redis_limiter_free(other);
  }

  /* GCRA's reply is redis-cell's: a refusal's retry-after is the emission
   * interval minus the time since (a few milliseconds at most here). */
  rk_limiter_spec gcra = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 0, .count_per_period = 1, .period_micros = 10000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("gcra-reply"), &gcra, &l));
  rk_decision d = {0};
  CHECK_OK(rk_redis_limiter_check(l, "k", 1, 1, &d));
  CHECK(d.allowed && d.limit == 1 && d.remaining == 0);
  CHECK(d.reset_after_micros > 9000000 && d.reset_after_micros <= 10000000);
  CHECK_OK(rk_redis_limiter_check(l, "k", 1, 1, &d));
  CHECK(!d.allowed && d.retry_after_micros > 9000000 && d.retry_after_micros <= 10000000);
  rk_redis_limiter_free(l);

  /* Algorithms that do not run in Redis. */
  rk_limiter_spec meter = {.algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER, .capacity = 3, .count_per_period = 1, .period_micros = 1000};
  rk_limiter_spec window = {.algorithm = RK_ALGORITHM_SLIDING_WINDOW, .limit = 3, .window_micros = 1000, .sub_windows = 2};
  l = NULL;
  CHECK_STATUS(rk_redis_limiter_new(store, name("meter"), &meter, &l), RK_UNSUPPORTED);
  CHECK(strstr(rk_last_error_message(), "does not run in Redis") != NULL);
  CHECK(rk_last_error_argument() == NULL);
  CHECK_STATUS(rk_redis_limiter_new(store, name("window"), &window, &l), RK_UNSUPPORTED);
  CHECK(l == NULL);
}

/* 2. The _async form. */
static void test_async(void) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 2, .window_micros = 1000000000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("async"), &spec, &l));
  struct waiter w;
  for (int i = 0; i < 4; i++) {
    waiter_init(&w, l); /* and a blocking call from inside the callback */
    CHECK_OK(rk_redis_limiter_check_async(l, "k", 1, 1, on_decision, &w));
    CHECK(waiter_wait(&w, 5.0));
    sleep_micros(20000); /* a second call would show */
    CHECK(w.calls == 1);
    CHECK(w.status == RK_OK && w.has_decision);
    CHECK(w.decision.allowed == (i < 2) && w.decision.limit == 2);
    /* The fourth is the third's refusal, remembered: decided on this
     * thread; the others on the library's. */
    CHECK(pthread_equal(w.thread, pthread_self()) == (i == 3));
    CHECK(w.nested == RK_UNSUPPORTED);
    waiter_destroy(&w);
  }
  /* A bad call calls nothing back. */
  waiter_init(&w, NULL);
  CHECK_STATUS(rk_redis_limiter_check_async(l, "k", 1, -1, on_decision, &w), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cost");
  char long_key[257];
  memset(long_key, 'k', sizeof long_key);
  CHECK_STATUS(rk_redis_limiter_check_async(l, long_key, sizeof long_key, 1, on_decision, &w), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_STATUS(rk_redis_limiter_check_async(l, "k", 1, 1, NULL, &w), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "callback");
  CHECK_STATUS(rk_redis_limiter_check_async(NULL, "k", 1, 1, on_decision, &w), RK_NULL_POINTER);
  sleep_micros(50000);
  CHECK(w.calls == 0);
  waiter_destroy(&w);
  /* The handle may be freed while a decision is under way. */
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_limiter_check_async(l, "other", 5, 1, on_decision, &w));
  rk_redis_limiter_free(l);
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.status == RK_OK && w.decision.allowed);
  waiter_destroy(&w);
}

/* 3. Threads on one handle. */
enum { THREADS = 4, TRIES = 25, LIMIT = 30 };
static atomic_int admitted_total, failures;

static void *hammer(void *arg) {
  const rk_redis_limiter *l = arg;
  for (int i = 0; i < TRIES; i++) {
    rk_decision d;
    if (rk_redis_limiter_check(l, "shared", 6, 1, &d) != RK_OK) {
      atomic_fetch_add(&failures, 1);
      continue;
    }
    if (d.allowed) atomic_fetch_add(&admitted_total, 1);
  }
  return NULL;
}

static void test_threads(void) {
  /* 30 at once, then one an hour: exactly 30 admitted of 100 tries. */
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = LIMIT - 1, .count_per_period = 1, .period_micros = 3600000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("threads"), &spec, &l));
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, l) == 0);
  for (int i = 0; i < THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  CHECK(atomic_load(&failures) == 0);
  CHECK_I64(atomic_load(&admitted_total), LIMIT);
  rk_redis_limiter_free(l);
}

/* 4. Leased mode. */
static void test_leased_mode(void) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 9, .count_per_period = 1, .period_micros = 3600000000};
  rk_redis_leased_limiter *n1 = NULL, *n2 = NULL;
  rk_redis_limiter *exact = NULL;
  CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &spec, 4, 60000000, &n1));
  CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &spec, 4, 60000000, &n2));
  CHECK_OK(rk_redis_limiter_new(store, name("leased"), &spec, &exact));
  rk_decision d = {0};
  CHECK_OK(rk_redis_leased_limiter_check(n1, "k", 1, 1, &d));
  CHECK(d.allowed && d.remaining == 3); /* what is left of n1's lease */
  CHECK_OK(rk_redis_limiter_peek(exact, "k", 1, 1, &d));
  CHECK(d.allowed && d.remaining == 5); /* the lease of 4 came out of 10 */
  int admitted = 1;
  for (int i = 0; i < 20; i++) {
    CHECK_OK(rk_redis_leased_limiter_check(i % 2 ? n1 : n2, "k", 1, 1, &d));
    admitted += d.allowed;
  }
  CHECK(admitted <= 10);
  CHECK(admitted >= 10 - 2 * 3); /* at most a batch less one stranded per node */
  CHECK_OK(rk_redis_leased_limiter_check(n2, "k", 1, 1, &d));
  CHECK(!d.allowed && d.retry_after_micros > 0);

  /* The _async form, from the lease. */
  struct waiter w;
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_leased_limiter_check_async(n1, "fresh", 5, 1, on_decision, &w));
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.status == RK_OK && w.decision.allowed && w.decision.remaining == 3);
  waiter_destroy(&w);

  /* Leases run on GCRA and the token bucket, with 1 ≤ batch ≤ limit. */
  rk_limiter_spec window = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 10, .window_micros = 1000000};
  rk_redis_leased_limiter *bad = NULL;
  CHECK_STATUS(rk_redis_leased_limiter_new(store, name("leased-window"), &window, 2, 1000, &bad), RK_UNSUPPORTED);
  CHECK_STATUS(rk_redis_leased_limiter_new(store, name("leased"), &spec, 0, 1000, &bad), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "batch");
  CHECK_STATUS(rk_redis_leased_limiter_new(store, name("leased"), &spec, 11, 1000, &bad), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "batch");
  CHECK_STATUS(rk_redis_leased_limiter_new(store, name("leased"), &spec, -1, 1000, &bad), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "batch");
  CHECK_STATUS(rk_redis_leased_limiter_new(store, name("leased"), &spec, 2, 0, &bad), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "lease_micros");
  CHECK(bad == NULL);
  rk_redis_leased_limiter_free(n1);
  rk_redis_leased_limiter_free(n2);
  rk_redis_limiter_free(exact);
  rk_redis_leased_limiter_free(NULL);
}

/* Refreshes until `m` counts `nodes` (its background heartbeat may have
 * read an older count), at most a second. */
static uint64_t refreshed(const rk_redis_membership *m, uint64_t nodes) {
  uint64_t count = 0;
  for (int i = 0; i < 50; i++) {
    CHECK_OK(rk_redis_membership_refresh(m, &count));
    if (count == nodes) break;
    sleep_micros(20000);
  }
  return count;
}

/* 5. Divided mode and membership. */
static void test_divided_mode_and_membership(void) {
  rk_redis_membership *m1 = NULL, *m2 = NULL;
  CHECK_OK(rk_redis_membership_join(store, name("group"), 3000000, &m1));
  uint64_t nodes = 0;
  CHECK_OK(rk_redis_membership_nodes(m1, &nodes));
  CHECK_I64((int64_t)nodes, 1);
  CHECK_OK(rk_redis_membership_join(store, name("group"), 3000000, &m2));
  CHECK_I64((int64_t)refreshed(m1, 2), 2);
  CHECK_OK(rk_redis_membership_nodes(m1, &nodes));
  CHECK_I64((int64_t)nodes, 2);
  CHECK_OK(rk_redis_membership_refresh(m2, NULL));
  /* Ids: distinct, through the buffer protocol. */
  size_t len = 0;
  CHECK_OK(rk_redis_membership_node_id(m1, NULL, 0, &len));
  CHECK(len > 0);
  char id1[128] = "", id2[128] = "";
  CHECK_OK(rk_redis_membership_node_id(m1, id1, sizeof id1, &len));
  CHECK(strlen(id1) == len);
  CHECK_OK(rk_redis_membership_node_id(m2, id2, sizeof id2, &len));
  CHECK(strcmp(id1, id2) != 0);
  char tiny[2];
  CHECK_STATUS(rk_redis_membership_node_id(m1, tiny, sizeof tiny, &len), RK_BUFFER_TOO_SMALL);
  /* A node that leaves drops out at once. */
  rk_redis_membership_free(m2);
  CHECK_I64((int64_t)refreshed(m1, 1), 1);
  rk_redis_membership_free(m1);

  /* Two nodes of a divided limit of 10: 5 each, decided locally. */
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 10, .window_micros = 1000000000000};
  rk_redis_divided_limiter *d1 = NULL, *d2 = NULL;
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &spec, 300000, 1000, &d1));
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &spec, 300000, 1000, &d2));
  /* d1 re-reads the count with its heartbeat, every 100 ms. */
  for (int i = 0; i < 100; i++) {
    CHECK_OK(rk_redis_divided_limiter_nodes(d1, &nodes));
    if (nodes == 2) break;
    sleep_micros(20000);
  }
  CHECK_I64((int64_t)nodes, 2);
  CHECK_OK(rk_redis_divided_limiter_nodes(d2, &nodes));
  CHECK_I64((int64_t)nodes, 2);
  int admitted1 = 0, admitted2 = 0;
  rk_decision d = {0};
  for (int i = 0; i < 8; i++) {
    CHECK_OK(rk_redis_divided_limiter_check(d1, "k", 1, 1, &d));
    admitted1 += d.allowed;
    CHECK_OK(rk_redis_divided_limiter_check(d2, "k", 1, 1, &d));
    admitted2 += d.allowed;
  }
  CHECK_I64(admitted1, 5);
  CHECK_I64(admitted2, 5);
  CHECK_OK(rk_redis_divided_limiter_check(d1, "\xc3", 1, 1, &d)); /* any bytes */
  CHECK(d.allowed);
  CHECK_STATUS(rk_redis_divided_limiter_check(d1, "k", 1, -1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cost");
  rk_redis_divided_limiter_free(d1);
  rk_redis_divided_limiter_free(d2);
  rk_redis_divided_limiter_free(NULL);
  rk_redis_membership_free(NULL);
}

/* 6. Guava's limiter, shared. The server's clock runs while the test
 * talks to it, so each wait is checked against the time that passed (E,
 * measured around the calls): Guava's wait less at most E. */
static int64_t micros_since(double start) { return (int64_t)((seconds_now() - start) * 1e6) + 1; }

static void test_shared_rate_limiter(void) {
  rk_redis_rate_limiter *a = NULL, *b = NULL, *c = NULL, *warm = NULL;
  double created = seconds_now();
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("guava"), 2.0, 1.0, 0, &a));
  /* Guava: the first request is free, the next pays for it (500 ms). */
  int64_t wait = -1;
  CHECK_OK(rk_redis_rate_limiter_reserve(a, 1, &wait));
  CHECK_I64(wait, 0);
  /* Joining keeps the first one's rate and state. */
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("guava"), 50.0, 1.0, 60000000, &b));
  double rate = 0;
  CHECK_OK(rk_redis_rate_limiter_get_rate(b, &rate));
  CHECK_DOUBLE(rate, 2.0);
  CHECK_OK(rk_redis_rate_limiter_reserve(b, 1, &wait));
  CHECK(wait <= 500000 && wait + micros_since(created) >= 500000);
  int64_t until = -1;
  CHECK_OK(rk_redis_rate_limiter_time_until_available(a, &until));
  CHECK(until <= 1000000 && until + micros_since(created) >= 1000000);
  bool yes = true;
  CHECK_OK(rk_redis_rate_limiter_try_acquire(a, 1, 0, &yes));
  CHECK(!yes || micros_since(created) >= 1000000);
  CHECK_OK(rk_redis_rate_limiter_can_acquire(a, -5, &yes));
  CHECK(!yes || micros_since(created) >= 1000000);
  CHECK_OK(rk_redis_rate_limiter_can_acquire(a, 1000000, &yes));
  CHECK(yes);
  bool reserved = true;
  CHECK_OK(rk_redis_rate_limiter_try_reserve(a, 1, 1000, &reserved, &wait));
  CHECK((!reserved && wait == 0) || micros_since(created) >= 999000);
  CHECK_OK(rk_redis_rate_limiter_try_reserve(a, 1, 1000000, &reserved, &wait));
  CHECK(reserved && wait <= 1000000 && wait + micros_since(created) >= 1000000);
  CHECK_OK(rk_redis_rate_limiter_set_rate(a, 1000.0));
  CHECK_OK(rk_redis_rate_limiter_get_rate(b, &rate));
  CHECK_DOUBLE(rate, 1000.0);

  /* acquire sleeps the wait it reports. */
  created = seconds_now();
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("acquire"), 10.0, 1.0, 0, &c));
  double waited = -1;
  CHECK_OK(rk_redis_rate_limiter_acquire(c, 1, &waited));
  CHECK_DOUBLE(waited, 0.0);
  double start = seconds_now();
  CHECK_OK(rk_redis_rate_limiter_acquire(c, 1, &waited));
  double slept = seconds_now() - start;
  CHECK(waited <= 0.1 && waited + (double)micros_since(created) / 1e6 >= 0.1);
  CHECK(slept >= waited - 0.001);
  int64_t waited_micros = -1;
  CHECK_OK(rk_redis_rate_limiter_acquire_micros(c, 1, &waited_micros));
  CHECK(waited_micros >= 0 && waited_micros <= 100000);
  CHECK_OK(rk_redis_rate_limiter_acquire(c, 1, NULL));
  CHECK_OK(rk_redis_rate_limiter_try_acquire(c, 2, 1000000, &yes));
  CHECK(yes);

  /* The _async reservations. */
  CHECK_OK(rk_redis_rate_limiter_set_rate(c, 1.0));
  struct waiter w;
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_rate_limiter_reserve_async(c, 3, on_wait, &w));
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.calls == 1 && w.status == RK_OK && w.reserved && w.wait_micros >= 0 && w.wait_micros <= 200000);
  waiter_destroy(&w);
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_rate_limiter_try_reserve_async(c, 1, 0, on_wait, &w));
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.status == RK_OK && !w.reserved && w.wait_micros == 0); /* 3 s owed */
  waiter_destroy(&w);
  waiter_init(&w, NULL);
  CHECK_STATUS(rk_redis_rate_limiter_reserve_async(c, 0, on_wait, &w), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STATUS(rk_redis_rate_limiter_try_reserve_async(c, 1, 0, NULL, &w), RK_NULL_POINTER);
  sleep_micros(20000);
  CHECK(w.calls == 0);
  waiter_destroy(&w);

  /* Warming up (10/s, 1 s, cold factor 3), cold: the second request pays
   * for a permit of the cold end, 280 ms where a bursty limiter's is
   * 100 ms. */
  CHECK_OK(rk_redis_rate_limiter_new_warming_up(store, name("warm"), 10.0, 1000000, 3.0, 0, &warm));
  start = seconds_now();
  CHECK_OK(rk_redis_rate_limiter_reserve(warm, 1, &wait));
  CHECK_I64(wait, 0);
  CHECK_OK(rk_redis_rate_limiter_reserve(warm, 1, &wait));
  CHECK(wait <= 280000 && wait + micros_since(start) >= 280000);
  rk_redis_rate_limiter_free(a);
  rk_redis_rate_limiter_free(b);
  rk_redis_rate_limiter_free(c);
  rk_redis_rate_limiter_free(warm);
  rk_redis_rate_limiter_free(NULL);
}

/* 7. Invalid arguments. */
/* Keys are bytes, as a keyed limiter's: not UTF-8 is a key of its own; at
 * most max_key_bytes long (256 unless set), a longer one refused naming
 * `key` before anything is sent, by every limiter and call. */
static void test_keys(void) {
  rk_limiter_spec ten = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 9, .count_per_period = 1, .period_micros = 60000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("bytes"), &ten, &l));
  rk_decision d = {0};
  CHECK_OK(rk_redis_limiter_check(l, "\xc3\xa9", 2, 1, &d)); /* "é" in UTF-8 */
  CHECK_I64((int64_t)d.remaining, 9);
  CHECK_OK(rk_redis_limiter_check(l, "\xff", 1, 1, &d)); /* not UTF-8 */
  CHECK_I64((int64_t)d.remaining, 9);
  CHECK_OK(rk_redis_limiter_check(l, "\xef\xbf\xbd", 3, 1, &d)); /* U+FFFD: another key */
  CHECK_I64((int64_t)d.remaining, 9);
  CHECK_OK(rk_redis_limiter_check(l, "\xff", 1, 1, &d));
  CHECK_I64((int64_t)d.remaining, 8);
  CHECK_OK(rk_redis_limiter_check(l, "a\0b", 3, 1, &d));
  CHECK_I64((int64_t)d.remaining, 9);
  CHECK_OK(rk_redis_limiter_check(l, "a", 1, 1, &d));
  CHECK_I64((int64_t)d.remaining, 9);

  static char key[65537];
  memset(key, 'k', sizeof key);
  CHECK_OK(rk_redis_limiter_check(l, key, 256, 1, &d));
  CHECK_STATUS(rk_redis_limiter_check(l, key, 257, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK(strstr(rk_last_error_message(), "key = 257") != NULL);
  CHECK_STATUS(rk_redis_limiter_peek(l, key, 257, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_OK(rk_redis_limiter_set_max_key_bytes(l, 65536));
  CHECK_OK(rk_redis_limiter_check(l, key, 65536, 1, &d));
  CHECK_I64((int64_t)d.remaining, 9);
  CHECK_STATUS(rk_redis_limiter_check(l, key, 65537, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_STATUS(rk_redis_limiter_set_max_key_bytes(l, 0), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_key_bytes");
  CHECK_STATUS(rk_redis_limiter_set_max_key_bytes(l, 65537), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_key_bytes");
  CHECK_STATUS(rk_redis_limiter_set_max_key_bytes(l, -1), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_redis_limiter_set_max_key_bytes(NULL, 256), RK_NULL_POINTER);
  CHECK_OK(rk_redis_limiter_set_max_key_bytes(l, 4));
  struct waiter w;
  waiter_init(&w, NULL);
  CHECK_STATUS(rk_redis_limiter_check_async(l, "12345", 5, 1, on_decision, &w), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_OK(rk_redis_limiter_check_async(l, "\xff\xfe", 2, 1, on_decision, &w));
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.calls == 1 && w.status == RK_OK && w.decision.allowed);
  waiter_destroy(&w);
  rk_redis_limiter_free(l);

  rk_redis_leased_limiter *leased = NULL;
  CHECK_OK(rk_redis_leased_limiter_new(store, name("bytes-leased"), &ten, 2, 60000000, &leased));
  CHECK_STATUS(rk_redis_leased_limiter_check(leased, key, 257, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_OK(rk_redis_leased_limiter_check(leased, "\xff", 1, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_leased_limiter_set_max_key_bytes(leased, 300));
  CHECK_OK(rk_redis_leased_limiter_check(leased, key, 300, 1, &d));
  CHECK(d.allowed);
  CHECK_STATUS(rk_redis_leased_limiter_set_max_key_bytes(leased, 0), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_key_bytes");
  rk_redis_leased_limiter_free(leased);

  rk_redis_divided_limiter *divided = NULL;
  CHECK_OK(rk_redis_divided_limiter_new(store, name("bytes-divided"), &ten, 10000000, 10, &divided));
  CHECK_STATUS(rk_redis_divided_limiter_check(divided, key, 257, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_OK(rk_redis_divided_limiter_set_max_key_bytes(divided, 1000));
  CHECK_OK(rk_redis_divided_limiter_check(divided, key, 1000, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_divided_limiter_check(divided, "\xff", 1, 1, &d));
  CHECK(d.allowed);
  CHECK_STATUS(rk_redis_divided_limiter_set_max_key_bytes(divided, 65537), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_key_bytes");
  rk_redis_divided_limiter_free(divided);
}

static void test_invalid_arguments(void) {
  rk_limiter_spec good = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 1, .count_per_period = 1, .period_micros = 1000};
  rk_redis_limiter *l = (rk_redis_limiter *)&good; /* must stay untouched */
  rk_redis_limiter *const sentinel = l;

  rk_limiter_spec bad_spec = good;
  bad_spec.count_per_period = 0;
  CHECK_STATUS(rk_redis_limiter_new(store, name("bad"), &bad_spec, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "count_per_period");
  bad_spec = good;
  bad_spec.limit = 3; /* a window's field */
  CHECK_STATUS(rk_redis_limiter_new(store, name("bad"), &bad_spec, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "limit");
  CHECK_STATUS(rk_redis_limiter_new(store, "caf\xe9", &good, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "name");
  CHECK(strstr(rk_last_error_message(), "UTF-8") != NULL);
  CHECK_STATUS(rk_redis_limiter_new(NULL, "n", &good, &l), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "store");
  CHECK_STATUS(rk_redis_limiter_new(store, NULL, &good, &l), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "name");
  CHECK_STATUS(rk_redis_limiter_new(store, "n", NULL, &l), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "spec");
  CHECK_STATUS(rk_redis_limiter_new(store, "n", &good, NULL), RK_NULL_POINTER);
  CHECK(l == sentinel);

  CHECK_OK(rk_redis_limiter_new(store, name("args"), &good, &l));
  rk_decision d = {.limit = 77};
  CHECK_STATUS(rk_redis_limiter_check(l, "k", 1, -1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cost");
  char long_key[257];
  memset(long_key, 'k', sizeof long_key);
  CHECK_STATUS(rk_redis_limiter_peek(l, long_key, sizeof long_key, 1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_STATUS(rk_redis_limiter_check(l, NULL, 3, 1, &d), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_STATUS(rk_redis_limiter_check(l, "k", 1, 1, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_decision");
  CHECK(d.limit == 77);
  CHECK_STATUS(rk_redis_limiter_set_when_unavailable(l, RK_WHEN_UNAVAILABLE_LOCAL_SHARE), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "policy");
  CHECK_STATUS(rk_redis_limiter_set_when_unavailable(l, 9), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_redis_limiter_set_when_unavailable(NULL, RK_WHEN_UNAVAILABLE_FAIL_OPEN), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_limiter_fall_back_to_local(l, NULL, 10), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "membership");
  CHECK_STATUS(rk_redis_limiter_limit(l, NULL), RK_NULL_POINTER);
  /* Nothing was consumed by the failed calls. */
  CHECK_OK(rk_redis_limiter_check(l, "k", 1, 2, &d));
  CHECK(d.allowed);

  rk_redis_membership *m = (rk_redis_membership *)&good;
  CHECK_STATUS(rk_redis_membership_join(store, name("g"), 2999, &m), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "ttl_micros");
  CHECK_STATUS(rk_redis_membership_join(store, name("g"), -1, &m), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "ttl_micros");
  /* At most a day, as in every language; the domain is the crate's. */
  CHECK_STATUS(rk_redis_membership_join(store, name("g"), 86400000001, &m), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "ttl_micros");
  CHECK_STR(rk_last_error_message(),
            "rk_redis_membership_join: invalid argument ttl_micros = 86400000001: must be between 3 milliseconds "
            "and a day (3000 to 86400000000 microseconds)");
  CHECK_STATUS(rk_redis_membership_join(store, NULL, 3000000, &m), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "group");
  CHECK(m == (rk_redis_membership *)&good);
  CHECK_OK(rk_redis_membership_join(store, name("g"), 3000000, &m));
  CHECK_STATUS(rk_redis_limiter_fall_back_to_local(l, m, 0), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_keys");
  CHECK_STATUS(rk_redis_limiter_fall_back_to_local(l, m, ((int64_t)1 << 40) + 1), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_keys");
  CHECK_STATUS(rk_redis_membership_nodes(m, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_redis_membership_node_id(m, NULL, 4, &(size_t){0}), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "buf");
  rk_redis_membership_free(m);
  rk_redis_limiter_free(l);

  rk_redis_divided_limiter *dl = NULL;
  CHECK_STATUS(rk_redis_divided_limiter_new(store, name("dv"), &good, 1000, 10, &dl), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "heartbeat_ttl_micros");
  CHECK_STR(rk_last_error_message(),
            "rk_redis_divided_limiter_new: invalid argument heartbeat_ttl_micros = 1000: must be between 3 "
            "milliseconds and a day (3000 to 86400000000 microseconds)");
  CHECK_STATUS(rk_redis_divided_limiter_new(store, name("dv"), &good, 86400000001, 10, &dl), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "heartbeat_ttl_micros");
  CHECK_STATUS(rk_redis_divided_limiter_new(store, name("dv"), &good, 3000000, 0, &dl), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_keys");
  bad_spec = good;
  bad_spec.period_micros = 0;
  CHECK_STATUS(rk_redis_divided_limiter_new(store, name("dv"), &bad_spec, 3000000, 10, &dl), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "period_micros");
  CHECK(dl == NULL);

  rk_redis_rate_limiter *r = NULL;
  CHECK_STATUS(rk_redis_rate_limiter_new_bursty(store, name("r"), 0.0, 1.0, 0, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits_per_second");
  CHECK_STATUS(rk_redis_rate_limiter_new_bursty(store, name("r"), NAN, 1.0, 0, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits_per_second");
  CHECK_STATUS(rk_redis_rate_limiter_new_bursty(store, name("r"), 1.0, -1.0, 0, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_burst_seconds");
  CHECK_STATUS(rk_redis_rate_limiter_new_bursty(store, name("r"), 1.0, 1.0, -1, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "idle_ttl_micros");
  CHECK_STATUS(rk_redis_rate_limiter_new_warming_up(store, name("r"), 1.0, -1, 3.0, 0, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "warmup_micros");
  CHECK_STATUS(rk_redis_rate_limiter_new_warming_up(store, name("r"), 1.0, 1000, 0.5, 0, &r), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cold_factor");
  CHECK(r == NULL);
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("r"), 1.0, 1.0, 0, &r));
  CHECK_STATUS(rk_redis_rate_limiter_acquire(r, 0, NULL), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STATUS(rk_redis_rate_limiter_reserve(r, (int64_t)INT32_MAX + 1, &(int64_t){0}), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits");
  CHECK_STATUS(rk_redis_rate_limiter_set_rate(r, -2.0), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "permits_per_second");
  CHECK_STATUS(rk_redis_rate_limiter_try_acquire(r, 1, 0, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_acquired");
  double rate = 0;
  CHECK_OK(rk_redis_rate_limiter_get_rate(r, &rate));
  CHECK_DOUBLE(rate, 1.0);
  rk_redis_rate_limiter_free(r);

  /* Stores: a URL that is not Redis's, negative options or beyond an hour,
     an empty list. */
  rk_redis_store *s = NULL;
  CHECK_STATUS(rk_redis_store_connect("http://localhost/", NULL, &s), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "url");
  rk_redis_store_options options = {.retry_interval_micros = -1};
  CHECK_STATUS(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &s), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "retry_interval_micros");
  options = (rk_redis_store_options){.timeout_micros = 3600000001};
  CHECK_STATUS(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &s), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "timeout_micros");
  CHECK_STR(rk_last_error_message(),
            "rk_redis_store_connect: invalid argument timeout_micros = 3600000001: must be above 0 and at most an "
            "hour (1 to 3600000000 microseconds)");
  options = (rk_redis_store_options){.timeout_micros = 3600000000, .connect_timeout_micros = 2000000};
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &s));
  rk_redis_store_free(s);
  s = NULL;
  CHECK_STATUS(rk_redis_store_connect_cluster(NULL, 0, NULL, &s), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "nodes_len");
  CHECK_STATUS(rk_redis_store_connect(NULL, NULL, &s), RK_NULL_POINTER);
  CHECK(s == NULL);
  bool down = true;
  CHECK_OK(rk_redis_store_is_down(store, &down));
  CHECK(!down);
  CHECK_STATUS(rk_redis_store_is_down(NULL, &down), RK_NULL_POINTER);
  rk_redis_store_free(NULL);
}

static void test_status_messages(void) {
  CHECK_STR(rk_status_message(RK_UNAVAILABLE), "redis unavailable");
  CHECK_STR(rk_status_message(RK_TIMEOUT), "redis timed out");
  CHECK_STR(rk_status_message(RK_REDIS_ERROR), "redis error");
  CHECK_STR(rk_status_message(RK_PROTOCOL_ERROR), "unexpected reply from redis");
  CHECK_STR(rk_status_message(RK_UNSUPPORTED), "unsupported");
}

int main(void) {
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_URL"), &options, &store));
  if (store == NULL) return check_summary("test_redis");
  test_status_messages();
  test_exact_mode();
  test_async();
  test_threads();
  test_leased_mode();
  test_divided_mode_and_membership();
  test_shared_rate_limiter();
  test_invalid_arguments();
  test_keys();
  rk_redis_store_free(store);
  return check_summary("test_redis");
}
