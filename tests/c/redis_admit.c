/*
 * Admits from a shared exact-mode limiter, for the cross-language test
 * (tests/redis/cross-language.sh):
 *
 *   redis_admit NAME KEY N
 *
 * Makes N rk_redis_limiter_check(KEY, 1) calls on the exact GCRA limiter
 * NAME (max_burst 29, 30 per 60 s: at most 30 admitted at once) of the
 * Redis at RATEKEEPER_REDIS_URL, and prints how many were admitted, alone
 * on one line — as python/tests/redis_admit.py and
 * node/test/redis-admit.mjs do with the same arguments. Exits 2 on bad
 * arguments, 1 when Redis does not decide.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ratekeeper.h"

int main(int argc, char **argv) {
  char *end = NULL;
  long long n = argc == 4 ? strtoll(argv[3], &end, 10) : -1;
  if (argc != 4 || end == argv[3] || *end != '\0' || n < 0) {
    fprintf(stderr, "usage: redis_admit NAME KEY N   (RATEKEEPER_REDIS_URL names the Redis)\n");
    return 2;
  }
  const char *url = getenv("RATEKEEPER_REDIS_URL");
  if (url == NULL || url[0] == '\0') {
    fprintf(stderr, "redis_admit: RATEKEEPER_REDIS_URL is not set\n");
    return 2;
  }
  rk_redis_store_options options = {.timeout_micros = 2000000, .connect_timeout_micros = 2000000};
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 29, .count_per_period = 30, .period_micros = 60000000};
  rk_redis_store *store = NULL;
  rk_redis_limiter *limiter = NULL;
  long long admitted = 0;
  rk_status status = rk_redis_store_connect(url, &options, &store);
  if (status == RK_OK) status = rk_redis_limiter_new(store, argv[1], &spec, &limiter);
  for (long long i = 0; status == RK_OK && i < n; i++) {
    rk_decision decision;
    status = rk_redis_limiter_check(limiter, argv[2], strlen(argv[2]), 1, &decision);
    admitted += status == RK_OK && decision.allowed;
  }
  if (status != RK_OK) fprintf(stderr, "redis_admit: %s: %s\n", rk_status_message(status), rk_last_error_message());
  rk_redis_limiter_free(limiter);
  rk_redis_store_free(store);
  if (status != RK_OK) return status == RK_INVALID_ARGUMENT ? 2 : 1;
  printf("%lld\n", admitted);
  return 0;
}
