/*
 * rk_redis_store_connect_sentinel() against tests/redis/with-redis
 * --sentinel (a master, one replica, three sentinels; RATEKEEPER_REDIS_SENTINELS
 * and RATEKEEPER_REDIS_MASTER_NAME): the master found by its name, limiters
 * deciding through it, and the arguments' statuses. (Following a failover
 * is tested from Rust, Python and Node.js: each of this binary's runs, under
 * valgrind and under ASan, would need a master of its own to kill.)
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

enum { MAX_SENTINELS = 8 };

static char name_buf[160];
static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

static size_t split(char *list, const char **out) {
  size_t n = 0;
  for (char *save = NULL, *url = strtok_r(list, ",", &save); url != NULL && n < MAX_SENTINELS;
       url = strtok_r(NULL, ",", &save))
    out[n++] = url;
  return n;
}

int main(void) {
  static char list[1024];
  snprintf(list, sizeof list, "%s", required_env("RATEKEEPER_REDIS_SENTINELS"));
  const char *master = required_env("RATEKEEPER_REDIS_MASTER_NAME");
  const char *sentinels[MAX_SENTINELS];
  size_t n = split(list, sentinels);
  CHECK(n == 3);
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};

  rk_redis_store *store = NULL;
  CHECK_OK(rk_redis_store_connect_sentinel(sentinels, n, master, &options, &store));
  if (store == NULL) return check_summary("test_redis_sentinel");
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 1000000000000};
  rk_redis_limiter *limiter = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("decide"), &spec, &limiter));
  int admitted = 0;
  for (int i = 0; i < 4; i++) {
    rk_decision d = {0};
    CHECK_OK(rk_redis_limiter_check(limiter, "k", 1, 1, &d));
    admitted += d.allowed;
  }
  CHECK(admitted == 3);
  rk_redis_limiter_free(limiter);
  rk_redis_store_free(store);

  /* Any one sentinel will do. */
  store = NULL;
  CHECK_OK(rk_redis_store_connect_sentinel(sentinels + 2, 1, master, NULL, &store));
  rk_redis_store_free(store);

  /* A name no sentinel monitors: unavailable, naming the cause. */
  store = NULL;
  CHECK_STATUS(rk_redis_store_connect_sentinel(sentinels, n, "no-such-master", &options, &store), RK_UNAVAILABLE);
  CHECK(strstr(rk_last_error_message(), "no master named") != NULL);
  CHECK(store == NULL);

  /* The arguments. */
  CHECK_STATUS(rk_redis_store_connect_sentinel(sentinels, n, NULL, &options, &store), RK_NULL_POINTER);
  CHECK(strstr(rk_last_error_message(), "master_name") != NULL);
  CHECK_STATUS(rk_redis_store_connect_sentinel(sentinels, n, "", &options, &store), RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "master_name") != NULL);
  CHECK_STATUS(rk_redis_store_connect_sentinel(sentinels, 0, master, &options, &store), RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "sentinels_len") != NULL);
  CHECK_STATUS(rk_redis_store_connect_sentinel(NULL, 1, master, &options, &store), RK_NULL_POINTER);
  const char *with_null[] = {sentinels[0], NULL};
  CHECK_STATUS(rk_redis_store_connect_sentinel(with_null, 2, master, &options, &store), RK_NULL_POINTER);
  CHECK(strstr(rk_last_error_message(), "sentinels[1]") != NULL);
  const char *not_a_url[] = {"nope"};
  CHECK_STATUS(rk_redis_store_connect_sentinel(not_a_url, 1, master, &options, &store), RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "sentinels") != NULL);
  CHECK_STATUS(rk_redis_store_connect_sentinel(sentinels, n, master, &options, NULL), RK_NULL_POINTER);
  CHECK(store == NULL);
  sleep_micros(200000);
  return check_summary("test_redis_sentinel");
}
