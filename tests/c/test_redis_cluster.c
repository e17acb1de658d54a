/*
 * The distributed limiters against a three-master Redis Cluster
 * (RATEKEEPER_REDIS_CLUSTER, set by tests/redis/with-redis --cluster):
 * keys spread over every slot, each limiter's keys in one (hash tags), so
 * every mode decides as against one server.
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

enum { MAX_NODES = 8, KEYS = 40 };

static char name_buf[160];
static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* The comma-separated node URLs, split in place. */
static size_t split_nodes(char *list, const char **nodes) {
  size_t n = 0;
  for (char *save = NULL, *url = strtok_r(list, ",", &save); url != NULL && n < MAX_NODES;
       url = strtok_r(NULL, ",", &save))
    nodes[n++] = url;
  return n;
}

/* `run` tells apart the limiters of each store's run. Windows are aligned to
   multiples of their length: the windowed ones here are about 11.6 days
   long, so the test's second never straddles a boundary (where a fresh
   window would rightly admit again). */
static void test_every_algorithm_over_many_slots(const rk_redis_store *store, int run) {
  static const rk_limiter_spec specs[] = {
      {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 1, .period_micros = 60000000},
      {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 0.1, .burst = 3},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 1000000000000},
      {.algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER, .limit = 3, .window_micros = 1000000000000},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 3, .window_micros = 60000000},
  };
  for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
    char limiter_name[64];
    snprintf(limiter_name, sizeof limiter_name, "algorithm-%zu-run-%d", s, run);
    rk_redis_limiter *a = NULL, *b = NULL;
    CHECK_OK(rk_redis_limiter_new(store, name(limiter_name), &specs[s], &a));
    CHECK_OK(rk_redis_limiter_new(store, name(limiter_name), &specs[s], &b));
    int wrong = 0;
    for (int k = 0; k < KEYS; k++) {
      char key[32];
      int len = snprintf(key, sizeof key, "user:%d", k);
      int admitted = 0;
      for (int i = 0; i < 5; i++) {
        rk_decision d = {0};
        rk_status status = rk_redis_limiter_check(i % 2 ? a : b, key, (size_t)len, 1, &d);
        if (status != RK_OK) {
          fprintf(stderr, "    %s\n", rk_last_error_message());
          wrong++;
          break;
        }
        admitted += d.allowed;
      }
      wrong += admitted != 3;
    }
    if (wrong) fprintf(stderr, "    algorithm %u: %d keys wrong\n", specs[s].algorithm, wrong);
    CHECK(wrong == 0);
    rk_redis_limiter_free(a);
    rk_redis_limiter_free(b);
  }
}

static void test_async_leased_divided_membership_guava(const rk_redis_store *store) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 9, .count_per_period = 1, .period_micros = 3600000000};
  rk_redis_limiter *exact = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("async"), &spec, &exact));
  struct waiter w;
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_limiter_check_async(exact, "k", 1, 4, on_decision, &w));
  CHECK(waiter_wait(&w, 5.0));
  CHECK(w.status == RK_OK && w.decision.allowed && w.decision.remaining == 6);
  waiter_destroy(&w);
  rk_redis_limiter_free(exact);

  rk_redis_leased_limiter *n1 = NULL, *n2 = NULL;
  CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &spec, 3, 60000000, &n1));
  CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &spec, 3, 60000000, &n2));
  int admitted = 0;
  for (int i = 0; i < 20; i++) {
    rk_decision d = {0};
    CHECK_OK(rk_redis_leased_limiter_check(i % 2 ? n1 : n2, "k", 1, 1, &d));
    admitted += d.allowed;
  }
  CHECK(admitted <= 10 && admitted >= 10 - 2 * 2);
  rk_redis_leased_limiter_free(n1);
  rk_redis_leased_limiter_free(n2);

  rk_redis_membership *m1 = NULL, *m2 = NULL;
  CHECK_OK(rk_redis_membership_join(store, name("group"), 3000000, &m1));
  CHECK_OK(rk_redis_membership_join(store, name("group"), 3000000, &m2));
  uint64_t nodes = 0;
  CHECK_OK(rk_redis_membership_refresh(m1, &nodes));
  CHECK_I64((int64_t)nodes, 2);
  rk_redis_membership_free(m1);
  rk_redis_membership_free(m2);

  rk_limiter_spec window = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 10, .window_micros = 1000000000000};
  rk_redis_divided_limiter *d1 = NULL, *d2 = NULL;
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &window, 300000, 100, &d1));
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &window, 300000, 100, &d2));
  for (int i = 0; i < 100; i++) {
    CHECK_OK(rk_redis_divided_limiter_nodes(d1, &nodes));
    if (nodes == 2) break;
    sleep_micros(20000);
  }
  CHECK_I64((int64_t)nodes, 2);
  admitted = 0;
  for (int i = 0; i < 8; i++) {
    rk_decision d = {0};
    CHECK_OK(rk_redis_divided_limiter_check(d1, "k", 1, 1, &d));
    admitted += d.allowed;
  }
  CHECK_I64(admitted, 5);
  rk_redis_divided_limiter_free(d1);
  rk_redis_divided_limiter_free(d2);

  double created = seconds_now();
  rk_redis_rate_limiter *g = NULL;
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("guava"), 2.0, 1.0, 0, &g));
  int64_t wait = -1;
  CHECK_OK(rk_redis_rate_limiter_reserve(g, 1, &wait));
  CHECK_I64(wait, 0);
  CHECK_OK(rk_redis_rate_limiter_reserve(g, 1, &wait));
  CHECK(wait <= 500000 && wait + (int64_t)((seconds_now() - created) * 1e6) + 1 >= 500000);
  CHECK_OK(rk_redis_rate_limiter_set_rate(g, 4.0));
  double rate = 0;
  CHECK_OK(rk_redis_rate_limiter_get_rate(g, &rate));
  CHECK_DOUBLE(rate, 4.0);
  rk_redis_rate_limiter_free(g);
}

/* Several limits as one composite over many slots: every limit of one key
   is under one hash tag, so its one script run is allowed on a cluster. */
static void test_composite_over_many_slots(const rk_redis_store *store) {
  static const rk_limiter_spec specs[] = {
      {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 1, .period_micros = 60000000},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 5, .window_micros = 1000000000000},
      {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 4, .window_micros = 60000000},
  };
  rk_redis_composite_limiter *c = NULL;
  CHECK_OK(rk_redis_composite_new(store, name("composite"), specs, 3, &c));
  if (c == NULL) return;
  int wrong = 0;
  for (int k = 0; k < KEYS; k++) {
    char key[32];
    int len = snprintf(key, sizeof key, "user:%d", k);
    int admitted = 0;
    rk_decision d = {0}, parts[3];
    for (int i = 0; i < 5; i++) {
      if (rk_redis_composite_check(c, key, (size_t)len, 1, &d, parts, 3) != RK_OK) {
        fprintf(stderr, "    %s\n", rk_last_error_message());
        wrong++;
        break;
      }
      admitted += d.allowed;
    }
    /* GCRA admits 3; the others counted only those 3. */
    wrong += admitted != 3 || parts[1].remaining != 2 || parts[2].remaining != 1;
    wrong += rk_redis_composite_refund(c, key, (size_t)len, 1) != RK_OK;
  }
  CHECK_I64(wrong, 0);
  rk_redis_composite_free(c);
}

int main(void) {
  static char list[1024];
  snprintf(list, sizeof list, "%s", required_env("RATEKEEPER_REDIS_CLUSTER"));
  const char *nodes[MAX_NODES];
  size_t n = split_nodes(list, nodes);
  CHECK(n == 3);
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};

  /* Every master given. */
  rk_redis_store *store = NULL;
  CHECK_OK(rk_redis_store_connect_cluster(nodes, n, &options, &store));
  if (store == NULL) return check_summary("test_redis_cluster");
  test_every_algorithm_over_many_slots(store, 1);
  test_async_leased_divided_membership_guava(store);
  test_composite_over_many_slots(store);
  rk_redis_store_free(store);

  /* One node: the others are discovered. */
  store = NULL;
  CHECK_OK(rk_redis_store_connect_cluster(nodes, 1, &options, &store));
  if (store != NULL) test_every_algorithm_over_many_slots(store, 2);
  rk_redis_store_free(store);

  /* A NULL among the nodes names its index. */
  const char *with_null[] = {nodes[0], NULL};
  store = NULL;
  CHECK_STATUS(rk_redis_store_connect_cluster(with_null, 2, &options, &store), RK_NULL_POINTER);
  CHECK(strstr(rk_last_error_message(), "nodes[1]") != NULL);
  CHECK(store == NULL);
  /* Let background leaves and heartbeats finish with the connections. */
  sleep_micros(200000);
  return check_summary("test_redis_cluster");
}
