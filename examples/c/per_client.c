/*
 * ratekeeper from C: one limit per client, in bounded memory. A keyed
 * limiter makes each client's limiter from one template on its first
 * request; at most max_keys are held, and a client is forgotten only once
 * its limit is whole again (which changes nothing).
 *
 * After `make install PREFIX=...` (see the README), build it anywhere with
 *   cc -std=c11 per_client.c $(pkg-config --cflags --libs ratekeeper) -o per_client
 * In the repository, `make -C examples/c run` builds and runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ratekeeper.h>

static void check(rk_status status, const char *what) {
  if (status != RK_OK) {
    fprintf(stderr, "%s failed: %s\n", what, rk_last_error_message());
    exit(1);
  }
}

int main(void) {
  /* Per client: bursts of 3, then 1 per second (GCRA); at most 10,000
   * clients held — a new one is refused at the bound, never admitted
   * past its limit (RK_WHEN_FULL_EVICT_SOONEST_FULL would admit it). */
  rk_limiter_spec per_client = {
      .algorithm = RK_ALGORITHM_GCRA, .max_burst = 2, .count_per_period = 1, .period_micros = 1000000};
  rk_keyed_options options = {.max_keys = 10000, .when_full = RK_WHEN_FULL_REFUSE_NEW_KEYS};
  rk_keyed_limiter *clients = NULL;
  check(rk_keyed_limiter_new(&per_client, &options, NULL, &clients), "rk_keyed_limiter_new");

  const char *requests[] = {"10.0.0.1", "10.0.0.1", "10.0.0.2", "10.0.0.1", "10.0.0.1", "10.0.0.2"};
  int refused = 0;
  for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
    rk_decision d;
    bool at_capacity;
    check(rk_keyed_limiter_check(clients, requests[i], strlen(requests[i]), 1, &d, &at_capacity),
          "rk_keyed_limiter_check");
    printf("%-9s %d  remaining %llu", requests[i], d.allowed ? 200 : 429, (unsigned long long)d.remaining);
    if (!d.allowed) printf("  retry after %.3f s%s", (double)d.retry_after_micros / 1e6, at_capacity ? " (at the bound)" : "");
    printf("\n");
    refused += !d.allowed;
  }
  rk_keyed_stats stats;
  check(rk_keyed_limiter_stats(clients, &stats), "rk_keyed_limiter_stats");
  printf("%llu clients held of at most %llu\n", (unsigned long long)stats.len, (unsigned long long)stats.max_keys);
  rk_keyed_limiter_free(clients);

  /* 10.0.0.1's fourth request is the only one over its limit. */
  if (refused != 1 || stats.len != 2) {
    fprintf(stderr, "unexpected: %d refused, %llu clients\n", refused, (unsigned long long)stats.len);
    return 1;
  }
  return 0;
}
