/*
 * rk_keyed_limiter: one limiter per key, in bounded memory.
 *
 * 1. Each key decides exactly as its own rk_limiter would, made from the
 *    same spec on the same manual clock, step for step (every algorithm);
 *    keys are bytes (a NUL inside one is part of it).
 * 2. A refusal or a free look never creates a key; remove and evict_full.
 * 3. The bound under RK_WHEN_FULL_REFUSE_NEW_KEYS (a refusal at capacity,
 *    counted) and RK_WHEN_FULL_EVICT_SOONEST_FULL (admitted, an eviction
 *    counted); never more keys than max_keys.
 * 4. Invalid arguments: a typed status naming the argument, nothing
 *    written.
 * 5. Threads hammering one handle, on a clock that stands still: together
 *    exactly the limit per key, never more keys than the bound.
 * 6. Refunds: a key's refund is its own limiter's (rk_limiter_refund), a
 *    key not held has nothing to give back, a composite gives back to
 *    every part; invalid arguments are typed statuses.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "check.h"

static const char *ALGORITHMS_NAMES[] = {"token bucket", "gcra", "meter", "queue", "fixed window",
                                         "sliding window", "sliding log", "window counter"};

/* One spec per admission-style algorithm, each admitting 3 at once. */
static rk_limiter_spec spec_of(int i) {
  rk_limiter_spec s = {0};
  switch (i) {
    case 0: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 2.0, .burst = 3}; break;
    case 1: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 2, .period_micros = 1000000}; break;
    case 2: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER, .capacity = 3, .count_per_period = 2, .period_micros = 1000000}; break;
    case 3: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = 2, .interval_micros = 500000}; break;
    case 4: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 1000000}; break;
    case 5: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_SLIDING_WINDOW, .limit = 3, .window_micros = 1000000, .sub_windows = 4}; break;
    case 6: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 1000000}; break;
    default: s = (rk_limiter_spec){.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 3, .window_micros = 1000000}; break;
  }
  return s;
}
enum { ALGORITHMS = 8 };

/* 1. Per key, the decisions of that key's own limiter. */
static void test_each_key_is_its_own_limiter(void) {
  for (int a = 0; a < ALGORITHMS; a++) {
    rk_manual_clock *clock = NULL;
    CHECK_OK(rk_manual_clock_new(&clock));
    rk_limiter_spec spec = spec_of(a);
    rk_keyed_options options = {.max_keys = 16};
    rk_keyed_limiter *keyed = NULL;
    CHECK_OK(rk_keyed_limiter_new(&spec, &options, clock, &keyed));
    rk_algorithm algorithm = 0;
    CHECK_OK(rk_keyed_limiter_algorithm(keyed, &algorithm));
    CHECK(algorithm == spec.algorithm);
    /* Two keys that differ only after a NUL, and the empty key. */
    static const char *keys[] = {"a\0x", "a\0y", ""};
    static const size_t lens[] = {3, 3, 0};
    rk_limiter *own[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3; k++) CHECK_OK(rk_limiter_new(&spec, clock, &own[k]));
    int mismatches = 0, admitted = 0;
    /* Costs and steps chosen to exercise admission, refusal and refill. */
    static const int64_t costs[] = {1, 2, 1, 1, 0, 3, 1, 4, 1, 2};
    for (int step = 0; step < 40; step++) {
      int k = step % 3;
      int64_t cost = costs[step % 10];
      rk_decision got = {0}, want = {0}, peeked = {0}, own_peeked = {0};
      bool full = true;
      CHECK_OK(rk_keyed_limiter_peek(keyed, keys[k], lens[k], cost, &peeked, &full));
      CHECK(!full);
      CHECK_OK(rk_limiter_peek(own[k], cost, &own_peeked));
      CHECK_OK(rk_keyed_limiter_check(keyed, keys[k], lens[k], cost, &got, &full));
      CHECK(!full);
      CHECK_OK(rk_limiter_check(own[k], cost, &want));
      if (!same_decision(&got, &want) || !same_decision(&peeked, &own_peeked)) mismatches++;
      admitted += got.allowed && cost > 0;
      if (step % 4 == 3) CHECK_OK(rk_manual_clock_advance_micros(clock, 150000));
    }
    if (mismatches) fprintf(stderr, "    %s: %d decisions differ\n", ALGORITHMS_NAMES[a], mismatches);
    CHECK(mismatches == 0);
    CHECK(admitted > 0);
    for (int k = 0; k < 3; k++) rk_limiter_free(own[k]);
    rk_keyed_limiter_free(keyed);
    rk_manual_clock_free(clock);
  }
}

/* 2. What creates a key, and what drops one. */
static void test_keys_come_and_go(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 2, .window_micros = 1000};
  rk_keyed_options options = {.max_keys = 100};
  rk_keyed_limiter *l = NULL;
  CHECK_OK(rk_keyed_limiter_new(&spec, &options, clock, &l));
  rk_keyed_stats stats = {0};
  rk_decision d = {0};

  CHECK_OK(rk_keyed_limiter_check(l, "free look", 9, 0, &d, NULL));
  CHECK(d.allowed);
  CHECK_OK(rk_keyed_limiter_check(l, "too dear", 8, 3, &d, NULL));
  CHECK(!d.allowed && d.retry_after_micros == RK_NEVER);
  CHECK_OK(rk_keyed_limiter_peek(l, "peeked", 6, 1, &d, NULL));
  CHECK(d.allowed && d.remaining == 1);
  CHECK_OK(rk_keyed_limiter_stats(l, &stats));
  CHECK_I64((int64_t)stats.len, 0); /* none of them made a key */
  CHECK_I64((int64_t)stats.max_keys, 100);

  CHECK_OK(rk_keyed_limiter_check(l, "k", 1, 2, &d, NULL));
  CHECK(d.allowed && d.remaining == 0);
  CHECK_OK(rk_keyed_limiter_check(l, "k", 1, 1, &d, NULL));
  CHECK(!d.allowed && d.retry_after_micros == 1000);
  CHECK_OK(rk_keyed_limiter_check(l, "j", 1, 1, &d, NULL));
  CHECK(d.allowed);
  CHECK_OK(rk_keyed_limiter_stats(l, &stats));
  CHECK_I64((int64_t)stats.len, 2);

  uint64_t evicted = 99;
  CHECK_OK(rk_keyed_limiter_evict_full(l, &evicted));
  CHECK_I64((int64_t)evicted, 0); /* neither is whole: dropping one would change a decision */
  bool removed = false;
  CHECK_OK(rk_keyed_limiter_remove(l, "k", 1, &removed));
  CHECK(removed);
  CHECK_OK(rk_keyed_limiter_remove(l, "k", 1, &removed));
  CHECK(!removed);
  CHECK_OK(rk_keyed_limiter_remove(l, "absent", 6, NULL));
  CHECK_OK(rk_keyed_limiter_check(l, "k", 1, 2, &d, NULL));
  CHECK(d.allowed); /* removed: it starts whole */

  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000));
  CHECK_OK(rk_keyed_limiter_evict_full(l, &evicted));
  CHECK_I64((int64_t)evicted, 2);
  CHECK_OK(rk_keyed_limiter_evict_full(l, NULL));
  CHECK_OK(rk_keyed_limiter_stats(l, &stats));
  CHECK_I64((int64_t)stats.len, 0);
  rk_keyed_limiter_free(l);
  rk_manual_clock_free(clock);
}

/* 3. The bound, under both policies. */
static void test_the_bound(void) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 1, .count_per_period = 1, .period_micros = 1000};
  rk_decision d = {0};
  rk_keyed_stats stats = {0};
  bool at_capacity = false;

  /* Refuse new keys: never over-admits. */
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_keyed_options refuse = {.max_keys = 2, .when_full = RK_WHEN_FULL_REFUSE_NEW_KEYS, .shards = 1};
  rk_keyed_limiter *l = NULL;
  CHECK_OK(rk_keyed_limiter_new(&spec, &refuse, clock, &l));
  CHECK_OK(rk_keyed_limiter_check(l, "a", 1, 1, &d, &at_capacity));
  CHECK(d.allowed && !at_capacity);
  CHECK_OK(rk_keyed_limiter_check(l, "b", 1, 2, &d, &at_capacity));
  CHECK(d.allowed && !at_capacity);
  CHECK_OK(rk_keyed_limiter_peek(l, "c", 1, 1, &d, &at_capacity));
  CHECK(!d.allowed && at_capacity);
  CHECK_OK(rk_keyed_limiter_check(l, "c", 1, 1, &d, &at_capacity));
  CHECK(!d.allowed && at_capacity && d.remaining == 0);
  /* Until a held key can be whole: a's, in 1000 µs. */
  CHECK_I64(d.retry_after_micros, 1000);
  CHECK_OK(rk_keyed_limiter_check(l, "a", 1, 1, &d, &at_capacity));
  CHECK(d.allowed && !at_capacity); /* held keys go on as always */
  CHECK_OK(rk_keyed_limiter_stats(l, &stats));
  CHECK_I64((int64_t)stats.len, 2);
  CHECK_I64((int64_t)stats.refused_new_keys, 1); /* the peek does not count */
  CHECK_I64((int64_t)stats.forced_evictions, 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 2000));
  CHECK_OK(rk_keyed_limiter_check(l, "c", 1, 1, &d, &at_capacity));
  CHECK(d.allowed && !at_capacity); /* whole keys made room */
  rk_keyed_limiter_free(l);

  /* Evict the soonest full: admits, and counts what that costs. */
  rk_keyed_options evict = {.max_keys = 2, .when_full = RK_WHEN_FULL_EVICT_SOONEST_FULL, .shards = 1};
  CHECK_OK(rk_keyed_limiter_new(&spec, &evict, clock, &l));
  CHECK_OK(rk_keyed_limiter_check(l, "a", 1, 2, &d, NULL));
  CHECK_OK(rk_keyed_limiter_check(l, "b", 1, 1, &d, NULL));
  CHECK_OK(rk_keyed_limiter_check(l, "c", 1, 1, &d, &at_capacity));
  CHECK(d.allowed && !at_capacity);
  CHECK_OK(rk_keyed_limiter_stats(l, &stats));
  CHECK_I64((int64_t)stats.len, 2);
  CHECK_I64((int64_t)stats.forced_evictions, 1);
  CHECK_I64((int64_t)stats.refused_new_keys, 0);
  /* b was owed least, so b went: a is still empty, b starts whole. */
  CHECK_OK(rk_keyed_limiter_peek(l, "a", 1, 1, &d, NULL));
  CHECK(!d.allowed);
  rk_keyed_limiter_free(l);
  rk_manual_clock_free(clock);
}

/* 4. Invalid arguments. */
static void test_invalid_arguments(void) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 2, .window_micros = 1000};
  rk_keyed_limiter *l = (rk_keyed_limiter *)&spec; /* must stay untouched */
  rk_keyed_limiter *const sentinel = l;
  static const struct {
    rk_keyed_options options;
    const char *argument;
  } bad[] = {
      {{.max_keys = 0}, "max_keys"},
      {{.max_keys = -1}, "max_keys"},
      {{.max_keys = ((int64_t)1 << 40) + 1}, "max_keys"},
      {{.max_keys = 8, .when_full = 2}, "when_full"},
      {{.max_keys = 8, .shards = 3}, "shards"},
      {{.max_keys = 8, .shards = 16}, "shards"},
      {{.max_keys = 8, .shards = -4}, "shards"},
      {{.max_keys = 8, .max_key_bytes = -1}, "max_key_bytes"},
      {{.max_keys = 8, .max_key_bytes = 65537}, "max_key_bytes"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_STATUS(rk_keyed_limiter_new(&spec, &bad[i].options, NULL, &l), RK_INVALID_ARGUMENT);
    CHECK_STR(rk_last_error_argument(), bad[i].argument);
    CHECK(l == sentinel);
  }
  rk_keyed_options options = {.max_keys = 8};
  rk_limiter_spec zeroed = {0};
  CHECK_STATUS(rk_keyed_limiter_new(&zeroed, &options, NULL, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "algorithm");
  rk_limiter_spec stray = spec;
  stray.burst = 5; /* a token bucket's field on a fixed window */
  CHECK_STATUS(rk_keyed_limiter_new(&stray, &options, NULL, &l), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "burst");
  CHECK_STATUS(rk_keyed_limiter_new(NULL, &options, NULL, &l), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "spec");
  CHECK_STATUS(rk_keyed_limiter_new(&spec, NULL, NULL, &l), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "options");
  CHECK_STATUS(rk_keyed_limiter_new(&spec, &options, NULL, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_limiter");
  CHECK(l == sentinel);

  CHECK_OK(rk_keyed_limiter_new(&spec, &options, NULL, &l));
  rk_decision d = {.limit = 77};
  CHECK_STATUS(rk_keyed_limiter_check(l, "k", 1, -1, &d, NULL), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cost");
  CHECK(strstr(rk_last_error_message(), "-1") != NULL);
  CHECK_STATUS(rk_keyed_limiter_peek(l, "k", 1, INT64_MIN, &d, NULL), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_keyed_limiter_check(l, NULL, 1, 1, &d, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "key");
  CHECK_STATUS(rk_keyed_limiter_check(l, "k", 1, 1, NULL, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_decision");
  CHECK_STATUS(rk_keyed_limiter_check(NULL, "k", 1, 1, &d, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "limiter");
  CHECK(d.limit == 77); /* nothing written */
  CHECK_STATUS(rk_keyed_limiter_remove(l, NULL, 2, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_keyed_limiter_stats(l, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_keyed_limiter_algorithm(NULL, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_keyed_limiter_evict_full(NULL, NULL), RK_NULL_POINTER);
  /* The failed calls consumed nothing. */
  CHECK_OK(rk_keyed_limiter_check(l, "k", 1, 2, &d, NULL));
  CHECK(d.allowed);
  rk_keyed_limiter_free(l);
  rk_keyed_limiter_free(NULL);
}

/* Keys: any bytes, at most max_key_bytes (256 unless set) of them; a longer
 * key is RK_INVALID_ARGUMENT naming "key", and nothing is stored. */
static void test_max_key_bytes(void) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 2, .window_micros = 1000};
  static char key[70000];
  memset(key, 'k', sizeof key);
  key[7] = (char)0xff; /* not UTF-8: bytes are keys as they are */
  static const struct {
    int64_t option;
    size_t longest;
  } bounds[] = {{0, 256}, {5, 5}, {65536, 65536}};
  for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
    rk_keyed_options options = {.max_keys = 8, .max_key_bytes = bounds[i].option};
    rk_keyed_limiter *l = NULL;
    CHECK_OK(rk_keyed_limiter_new(&spec, &options, NULL, &l));
    size_t longest = bounds[i].longest;
    rk_decision d = {.limit = 77};
    CHECK_STATUS(rk_keyed_limiter_check(l, key, longest + 1, 1, &d, NULL), RK_INVALID_ARGUMENT);
    CHECK_STR(rk_last_error_argument(), "key");
    char length[32];
    snprintf(length, sizeof length, "key = %zu:", longest + 1);
    CHECK(strstr(rk_last_error_message(), length) != NULL);
    CHECK(d.limit == 77); /* nothing written */
    CHECK_STATUS(rk_keyed_limiter_peek(l, key, longest + 1, 1, &d, NULL), RK_INVALID_ARGUMENT);
    bool removed = true;
    CHECK_STATUS(rk_keyed_limiter_remove(l, key, longest + 1, &removed), RK_INVALID_ARGUMENT);
    rk_keyed_stats stats = {0};
    CHECK_OK(rk_keyed_limiter_stats(l, &stats));
    CHECK_I64((int64_t)stats.len, 0);
    CHECK_I64((int64_t)stats.max_key_bytes, (int64_t)longest);
    CHECK(stats.max_bytes > 8 * longest);
    CHECK_OK(rk_keyed_limiter_check(l, key, longest, 1, &d, NULL));
    CHECK(d.allowed);
    CHECK_OK(rk_keyed_limiter_stats(l, &stats));
    CHECK_I64((int64_t)stats.len, 1);
    rk_keyed_limiter_free(l);
  }
}

/* 5. Threads. */
enum { THREADS = 4, KEYS = 64, LIMIT = 50, BOUND = 16 };

struct shared {
  const rk_keyed_limiter *limiter;
  atomic_int failures;
  atomic_llong admitted[KEYS];
  atomic_ullong most_keys;
};

static void *hammer(void *arg) {
  struct shared *s = arg;
  for (int round = 0; round < 2 * LIMIT; round++) {
    for (int k = 0; k < KEYS; k++) {
      char key[16];
      int len = snprintf(key, sizeof key, "user:%d", k);
      rk_decision d;
      rk_keyed_stats stats;
      if (rk_keyed_limiter_check(s->limiter, key, (size_t)len, 1, &d, NULL) != RK_OK ||
          rk_keyed_limiter_stats(s->limiter, &stats) != RK_OK) {
        atomic_fetch_add(&s->failures, 1);
        return NULL;
      }
      if (d.allowed) atomic_fetch_add(&s->admitted[k], 1);
      unsigned long long seen = atomic_load(&s->most_keys);
      while (stats.len > seen && !atomic_compare_exchange_weak(&s->most_keys, &seen, stats.len)) {
      }
    }
  }
  return NULL;
}

static void run_threads(rk_keyed_options options, struct shared *s) {
  rk_manual_clock *clock = NULL; /* stands still: nothing refills */
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = LIMIT, .window_micros = 1000000};
  rk_keyed_limiter *l = NULL;
  CHECK_OK(rk_keyed_limiter_new(&spec, &options, clock, &l));
  s->limiter = l;
  pthread_t threads[THREADS];
  for (int i = 0; i < THREADS; i++) CHECK(pthread_create(&threads[i], NULL, hammer, s) == 0);
  for (int i = 0; i < THREADS; i++) CHECK(pthread_join(threads[i], NULL) == 0);
  CHECK(atomic_load(&s->failures) == 0);
  rk_keyed_limiter_free(l);
  rk_manual_clock_free(clock);
}

static void test_threads(void) {
  /* Room for every key: each key admits exactly its limit, whoever asks. */
  static struct shared roomy;
  run_threads((rk_keyed_options){.max_keys = KEYS}, &roomy);
  int wrong = 0;
  for (int k = 0; k < KEYS; k++) wrong += atomic_load(&roomy.admitted[k]) != LIMIT;
  CHECK(wrong == 0);
  CHECK(atomic_load(&roomy.most_keys) <= KEYS);

  /* A bound below the keys: never more held, never more than the limit
   * per key while it is held, and refusals at the bound instead. */
  static struct shared bounded;
  run_threads((rk_keyed_options){.max_keys = BOUND, .shards = 1}, &bounded);
  long long total = 0;
  for (int k = 0; k < KEYS; k++) {
    CHECK(atomic_load(&bounded.admitted[k]) <= LIMIT);
    total += atomic_load(&bounded.admitted[k]);
  }
  CHECK(total == (long long)BOUND * LIMIT); /* the first BOUND keys to arrive, whole */
  CHECK(atomic_load(&bounded.most_keys) <= BOUND);

  /* Evicting at the bound: held keys still never exceed it. */
  static struct shared evicting;
  run_threads((rk_keyed_options){.max_keys = BOUND, .when_full = RK_WHEN_FULL_EVICT_SOONEST_FULL}, &evicting);
  CHECK(atomic_load(&evicting.most_keys) <= BOUND);
}

/* 6. Refunds, keyed and not. */
static void test_refund(void) {
  for (int a = 0; a < ALGORITHMS; a++) {
    rk_manual_clock *clock = NULL;
    CHECK_OK(rk_manual_clock_new(&clock));
    rk_limiter_spec spec = spec_of(a);
    rk_keyed_options options = {.max_keys = 16};
    rk_keyed_limiter *keyed = NULL;
    rk_limiter *own = NULL;
    CHECK_OK(rk_keyed_limiter_new(&spec, &options, clock, &keyed));
    CHECK_OK(rk_limiter_new(&spec, clock, &own));
    bool held = true;
    CHECK_OK(rk_keyed_limiter_refund(keyed, "k", 1, 1, &held));
    CHECK(!held);
    rk_keyed_stats stats = {0};
    CHECK_OK(rk_keyed_limiter_stats(keyed, &stats));
    CHECK(stats.len == 0);
    /* Spend all 3, then refund 1: the key's limiter and its own agree. */
    rk_decision got = {0}, want = {0};
    CHECK_OK(rk_keyed_limiter_check(keyed, "k", 1, 3, &got, NULL));
    CHECK_OK(rk_limiter_check(own, 3, &want));
    CHECK(got.allowed && want.allowed);
    CHECK_OK(rk_keyed_limiter_refund(keyed, "k", 1, 1, &held));
    CHECK(held);
    CHECK_OK(rk_limiter_refund(own, 1));
    CHECK_OK(rk_keyed_limiter_peek(keyed, "k", 1, 1, &got, NULL));
    CHECK_OK(rk_limiter_peek(own, 1, &want));
    CHECK(same_decision(&got, &want));
    /* Every algorithm but the queue (which hands out slots) takes it back. */
    if (got.allowed != (spec.algorithm != RK_ALGORITHM_LEAKY_BUCKET_QUEUE)) {
      fprintf(stderr, "    %s: refund %s\n", ALGORITHMS_NAMES[a], got.allowed ? "given" : "not given");
    }
    CHECK(got.allowed == (spec.algorithm != RK_ALGORITHM_LEAKY_BUCKET_QUEUE));
    CHECK_OK(rk_keyed_limiter_refund(keyed, "k", 1, 0, NULL));
    CHECK_OK(rk_limiter_refund(own, 0));
    CHECK_OK(rk_manual_clock_advance_micros(clock, 250000));
    CHECK_OK(rk_keyed_limiter_refund(keyed, "k", 1, 100, NULL));
    CHECK_OK(rk_limiter_refund(own, 100));
    CHECK_OK(rk_keyed_limiter_peek(keyed, "k", 1, 0, &got, NULL));
    CHECK_OK(rk_limiter_peek(own, 0, &want));
    CHECK(same_decision(&got, &want));
    CHECK(got.remaining <= got.limit);
    /* Invalid arguments change nothing. */
    CHECK_STATUS(rk_limiter_refund(own, -1), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_limiter_refund(NULL, 1), RK_NULL_POINTER);
    CHECK_STATUS(rk_keyed_limiter_refund(keyed, "k", 1, -1, &held), RK_INVALID_ARGUMENT);
    CHECK_STATUS(rk_keyed_limiter_refund(keyed, NULL, 1, 1, &held), RK_NULL_POINTER);
    CHECK_STATUS(rk_keyed_limiter_refund(NULL, "k", 1, 1, &held), RK_NULL_POINTER);
    static const char long_key[300] = {0};
    CHECK_STATUS(rk_keyed_limiter_refund(keyed, long_key, sizeof long_key, 1, &held), RK_INVALID_ARGUMENT);
    rk_limiter_free(own);
    rk_keyed_limiter_free(keyed);
    rk_manual_clock_free(clock);
  }
  /* A composite gives back to every part. */
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_limiter_spec parts[] = {
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 2, .window_micros = 1000000},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 10000000},
  };
  rk_composite_limiter *composite = NULL;
  CHECK_OK(rk_composite_limiter_new(parts, 2, clock, &composite));
  rk_decision d = {0};
  CHECK_OK(rk_composite_limiter_check(composite, 2, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_composite_limiter_check(composite, 1, &d));
  CHECK(!d.allowed);
  CHECK_OK(rk_composite_limiter_refund(composite, 1));
  CHECK_OK(rk_composite_limiter_check(composite, 1, &d));
  CHECK(d.allowed && d.remaining == 0);
  CHECK_STATUS(rk_composite_limiter_refund(composite, -1), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_composite_limiter_refund(NULL, 1), RK_NULL_POINTER);
  rk_composite_limiter_free(composite);
  rk_manual_clock_free(clock);
}

int main(void) {
  test_each_key_is_its_own_limiter();
  test_keys_come_and_go();
  test_the_bound();
  test_invalid_arguments();
  test_max_key_bytes();
  test_threads();
  test_refund();
  return check_summary("test_keyed");
}
