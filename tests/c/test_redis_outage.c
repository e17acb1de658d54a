/*
 * When Redis goes away: the test starts a redis-server of its own, then
 * kills it (kill -9), restarts it, and freezes it (SIGSTOP) — and checks
 * that no call crashes or hangs past the store's timeout, that each
 * unavailability policy decides as documented, that what needs no round
 * trip (remembered refusals, divided mode) goes on, and that decisions are
 * back on Redis within a second of it answering again.
 *
 * Runs under tests/redis/with-redis like the other Redis tests (which
 * checks that redis-server is installed); it does not use that server.
 */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "redis_support.h"

extern char **environ;

/* The store's timeout: long enough for a first script load under valgrind
 * on a loaded machine (300 ms was not: a CI run timed out the first
 * membership join at a load average of 10), short enough to keep the
 * frozen server's waits brief. */
enum { TIMEOUT_MICROS = 1000000, RETRY_MICROS = 200000 };
/* What a call may take beyond the timeout before it counts as a hang
 * (valgrind is slow). */
static const double SLACK_SECONDS = 1.0;
/* How soon decisions must be back on Redis once it answers again. */
static const double BACK_WITHIN_SECONDS = 1.0;

static pid_t server = -1;
static int port;
static char dir[] = "/tmp/rk-c-outage-XXXXXX";
static char url[64];
static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = 0};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
      getsockname(fd, (struct sockaddr *)&addr, &len) != 0) {
    perror("free_port");
    exit(2);
  }
  close(fd);
  return ntohs(addr.sin_port);
}

static bool accepts_connections(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
  if (fd >= 0) close(fd);
  return ok;
}

/* Starts redis-server on `port` (empty: it keeps nothing) and waits until
 * it accepts connections. */
static void start_server(void) {
  char port_arg[16];
  snprintf(port_arg, sizeof port_arg, "%d", port);
  char *argv[] = {"redis-server", "--port", port_arg, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                  "--dir", dir, NULL};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", 1 /* O_WRONLY */, 0);
  if (posix_spawnp(&server, "redis-server", &actions, NULL, argv, environ) != 0) {
    perror("redis-server");
    exit(2);
  }
  posix_spawn_file_actions_destroy(&actions);
  for (int i = 0; i < 400 && !accepts_connections(); i++) sleep_micros(25000);
  if (!accepts_connections()) {
    fprintf(stderr, "redis-server did not start on port %d\n", port);
    exit(2);
  }
}

static void kill_server(void) {
  if (server > 0) {
    kill(server, SIGCONT);
    kill(server, SIGKILL);
    waitpid(server, NULL, 0);
    server = -1;
  }
}

static void cleanup(void) {
  kill_server();
  rmdir(dir);
}

/* A status of Redis not answering. */
static bool unanswered(rk_status status) { return status == RK_UNAVAILABLE || status == RK_TIMEOUT; }

/* With the server frozen (SIGSTOP: connections open, nothing answered),
 * every call returns within 1.2x the store's timeout — "the longest one
 * decision may take, reconnection included" — blocking or async, the
 * first and every later one (which opens a new connection to the frozen
 * server). A store of its own: a short retry interval, so that most calls
 * do wait for the server. */
enum { FROZEN_TIMEOUT_MICROS = 300000, FROZEN_RETRY_MICROS = 20000, FROZEN_CALLS = 5 };

static rk_status frozen_check(const rk_redis_limiter *l, const rk_redis_leased_limiter *leased, int kind) {
  rk_decision d;
  switch (kind) {
    case 0: return rk_redis_limiter_check(l, "check", 5, 1, &d);
    case 1: return rk_redis_limiter_peek(l, "peek", 4, 1, &d);
    case 2: return rk_redis_leased_limiter_check(leased, "leased", 6, 1, &d);
    default: {
      struct waiter w;
      waiter_init(&w, NULL);
      rk_status status = rk_redis_limiter_check_async(l, "async", 5, 1, on_decision, &w);
      if (status == RK_OK) {
        CHECK(waiter_wait(&w, 10.0));
        status = w.status;
      }
      waiter_destroy(&w);
      return status;
    }
  }
}

static void frozen_calls_take_at_most_their_timeout(void) {
  static const char *const kinds[] = {"check", "peek", "leased check", "check_async"};
  enum { KINDS = sizeof kinds / sizeof kinds[0] };
  rk_redis_store_options options = {.timeout_micros = FROZEN_TIMEOUT_MICROS,
                                    .connect_timeout_micros = 2000000,
                                    .retry_interval_micros = FROZEN_RETRY_MICROS};
  rk_redis_store *store = NULL;
  CHECK_OK(rk_redis_store_connect(url, &options, &store));
  if (store == NULL) return;
  rk_limiter_spec window = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 1000000000, .window_micros = 1000000000000};
  rk_limiter_spec gcra = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 9, .count_per_period = 1, .period_micros = 60000000};
  rk_redis_limiter *l = NULL;
  rk_redis_leased_limiter *leased = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("frozen"), &window, &l));
  CHECK_OK(rk_redis_leased_limiter_new(store, name("frozen-leased"), &gcra, 1, 1, &leased));
  for (int kind = 0; kind < KINDS; kind++) CHECK_OK(frozen_check(l, leased, kind)); /* connections open */

  const double timeout = (double)FROZEN_TIMEOUT_MICROS / 1e6;
  int waited[KINDS] = {0};
  kill(server, SIGSTOP);
  for (int round = 0; round < FROZEN_CALLS; round++) {
    for (int kind = 0; kind < KINDS; kind++) {
      double start = seconds_now();
      rk_status status = frozen_check(l, leased, kind);
      double took = seconds_now() - start;
      if (took > 1.2 * timeout) fprintf(stderr, "    %s, call %d: %.3f s\n", kinds[kind], round, took);
      CHECK(took <= 1.2 * timeout);
      CHECK(unanswered(status));
      waited[kind] += status == RK_TIMEOUT && took >= 0.9 * timeout;
      /* Past the retry interval, and anything that may lead to it. */
      sleep_micros(FROZEN_TIMEOUT_MICROS + FROZEN_RETRY_MICROS + 100000);
    }
  }
  kill(server, SIGCONT);
  /* The bound held on calls that did wait for the server, the first and
   * later (reconnecting) ones. */
  for (int kind = 0; kind < KINDS; kind++) {
    if (waited[kind] < 3) fprintf(stderr, "    %s: %d calls waited for the server\n", kinds[kind], waited[kind]);
    CHECK(waited[kind] >= 3);
  }
  rk_redis_limiter_free(l);
  rk_redis_leased_limiter_free(leased);
  rk_redis_store_free(store);
}

/* Checks through `l` until Redis decides (RK_OK), at most 5 s; returns
 * how long that took. */
static double seconds_until_decided(const rk_redis_limiter *l) {
  double start = seconds_now();
  rk_decision d;
  while (rk_redis_limiter_check(l, "back", 4, 1, &d) != RK_OK && seconds_now() - start < 5.0) sleep_micros(10000);
  return seconds_now() - start;
}

int main(void) {
  if (mkdtemp(dir) == NULL) {
    perror("mkdtemp");
    return 2;
  }
  atexit(cleanup);
  required_env("RATEKEEPER_REDIS_URL"); /* run as the other Redis tests are */
  port = free_port();
  snprintf(url, sizeof url, "redis://127.0.0.1:%d/", port);
  rk_redis_store_options options = {
      .timeout_micros = TIMEOUT_MICROS, .connect_timeout_micros = 2000000, .retry_interval_micros = RETRY_MICROS};

  /* Nothing there yet: connecting fails, typed. */
  rk_redis_store *store = NULL;
  CHECK_STATUS(rk_redis_store_connect(url, &options, &store), RK_UNAVAILABLE);
  CHECK(rk_last_error_argument() == NULL);
  CHECK(store == NULL);

  start_server();
  CHECK_OK(rk_redis_store_connect(url, &options, &store));
  if (store == NULL) return check_summary("test_redis_outage");

  rk_limiter_spec window = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 10, .window_micros = 1000000000000};
  rk_limiter_spec gcra = {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 9, .count_per_period = 10, .period_micros = 60000000};
  rk_redis_limiter *err = NULL, *closed = NULL, *open = NULL, *share = NULL, *forgetful = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name("window"), &window, &err));
  CHECK_OK(rk_redis_limiter_new(store, name("window"), &window, &closed));
  CHECK_OK(rk_redis_limiter_new(store, name("window"), &window, &open));
  CHECK_OK(rk_redis_limiter_new(store, name("window"), &window, &share));
  CHECK_OK(rk_redis_limiter_new(store, name("window"), &window, &forgetful));
  CHECK_OK(rk_redis_limiter_set_when_unavailable(closed, RK_WHEN_UNAVAILABLE_FAIL_CLOSED));
  CHECK_OK(rk_redis_limiter_set_when_unavailable(open, RK_WHEN_UNAVAILABLE_FAIL_OPEN));
  CHECK_OK(rk_redis_limiter_set_remember_refusals(forgetful, false));
  /* The local share: two nodes in the group, so 5 of the 10 each. */
  rk_redis_membership *m1 = NULL, *m2 = NULL;
  CHECK_OK(rk_redis_membership_join(store, name("nodes"), 10000000, &m1));
  CHECK_OK(rk_redis_membership_join(store, name("nodes"), 10000000, &m2));
  uint64_t nodes = 0;
  CHECK_OK(rk_redis_membership_refresh(m1, &nodes));
  CHECK_I64((int64_t)nodes, 2);
  CHECK_OK(rk_redis_limiter_fall_back_to_local(share, m1, 100));
  rk_redis_leased_limiter *leased = NULL;
  CHECK_OK(rk_redis_leased_limiter_new(store, name("leased"), &gcra, 2, 60000000, &leased));
  rk_redis_divided_limiter *divided = NULL;
  CHECK_OK(rk_redis_divided_limiter_new(store, name("divided"), &window, 10000000, 100, &divided));
  rk_redis_rate_limiter *guava = NULL;
  CHECK_OK(rk_redis_rate_limiter_new_bursty(store, name("guava"), 100.0, 1.0, 0, &guava));

  /* While Redis answers, it decides, whatever the policy. */
  rk_decision d = {0};
  CHECK_OK(rk_redis_limiter_check(err, "spent", 5, 10, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_limiter_check(err, "spent", 5, 1, &d));
  CHECK(!d.allowed); /* and remembered */
  CHECK_OK(rk_redis_limiter_check(closed, "k", 1, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_limiter_check(share, "k", 1, 1, &d));
  CHECK(d.allowed && d.remaining == 8); /* Redis's count, shared with `closed` */
  CHECK_OK(rk_redis_leased_limiter_check(leased, "k", 1, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_rate_limiter_acquire(guava, 1, NULL));

  /* kill -9. */
  kill_server();
  double start = seconds_now();
  rk_status status = rk_redis_limiter_check(err, "k", 1, 1, &d);
  double took = seconds_now() - start;
  CHECK(unanswered(status));
  CHECK(took < (double)TIMEOUT_MICROS / 1e6 + SLACK_SECONDS);
  CHECK(rk_last_error_argument() == NULL);
  CHECK(strlen(rk_last_error_message()) > 0);
  bool down = false;
  CHECK_OK(rk_redis_store_is_down(store, &down));
  CHECK(down);
  /* Marked down: the next calls fail at once, without a timeout. */
  start = seconds_now();
  CHECK_STATUS(rk_redis_limiter_check(err, "k", 1, 1, &d), RK_UNAVAILABLE);
  CHECK_STATUS(rk_redis_limiter_peek(err, "k", 1, 1, &d), RK_UNAVAILABLE);
  CHECK_STATUS(rk_redis_limiter_check(forgetful, "spent", 5, 1, &d), RK_UNAVAILABLE);
  CHECK(seconds_now() - start < (double)TIMEOUT_MICROS / 1e6);
  /* A remembered refusal needs no round trip. */
  CHECK_OK(rk_redis_limiter_check(err, "spent", 5, 1, &d));
  CHECK(!d.allowed && d.retry_after_micros > 0);
  /* The policies decide. */
  CHECK_OK(rk_redis_limiter_check(closed, "k", 1, 1, &d));
  CHECK(!d.allowed);
  CHECK_I64(d.retry_after_micros, RETRY_MICROS);
  CHECK_OK(rk_redis_limiter_check(open, "k", 1, 1, &d));
  CHECK(d.allowed);
  int admitted = 0;
  for (int i = 0; i < 8; i++) {
    CHECK_OK(rk_redis_limiter_check(share, "x", 1, 1, &d));
    admitted += d.allowed;
  }
  CHECK_I64(admitted, 5); /* limit ÷ the 2 nodes last counted */
  /* Divided mode decides locally; the others fail, typed. */
  CHECK_OK(rk_redis_divided_limiter_check(divided, "k", 1, 1, &d));
  CHECK(d.allowed);
  CHECK(unanswered(rk_redis_leased_limiter_check(leased, "new key", 7, 1, &d)));
  CHECK(unanswered(rk_redis_rate_limiter_acquire(guava, 1, NULL)));
  CHECK(unanswered(rk_redis_membership_refresh(m2, &nodes)));
  CHECK_OK(rk_redis_membership_nodes(m1, &nodes));
  CHECK_I64((int64_t)nodes, 2); /* the last count, kept */
  struct waiter w;
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_limiter_check_async(err, "async", 5, 1, on_decision, &w));
  CHECK(waiter_wait(&w, (double)TIMEOUT_MICROS / 1e6 + SLACK_SECONDS));
  CHECK(w.calls == 1 && unanswered(w.status) && !w.has_decision && strlen(w.message) > 0);
  waiter_destroy(&w);
  waiter_init(&w, NULL);
  CHECK_OK(rk_redis_rate_limiter_reserve_async(guava, 1, on_wait, &w));
  CHECK(waiter_wait(&w, (double)TIMEOUT_MICROS / 1e6 + SLACK_SECONDS));
  CHECK(w.calls == 1 && unanswered(w.status) && !w.reserved);
  waiter_destroy(&w);

  /* Back: decisions return to Redis within a second. */
  start_server();
  double back = seconds_until_decided(err);
  fprintf(stderr, "    back on Redis %.3f s after a restart\n", back);
  CHECK(back < BACK_WITHIN_SECONDS);
  CHECK_OK(rk_redis_store_is_down(store, &down));
  CHECK(!down);
  CHECK_OK(rk_redis_limiter_check(closed, "k", 1, 1, &d));
  CHECK(d.allowed && d.remaining == 9); /* Redis again: the restarted server kept nothing */
  CHECK_OK(rk_redis_limiter_check(share, "x", 1, 1, &d));
  CHECK(d.allowed && d.remaining == 9);
  CHECK_OK(rk_redis_leased_limiter_check(leased, "new key", 7, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_redis_rate_limiter_acquire(guava, 1, NULL));

  /* Frozen: a timeout, not a hang; the policies decide; back again. */
  kill(server, SIGSTOP);
  start = seconds_now();
  CHECK_STATUS(rk_redis_limiter_check(err, "frozen", 6, 1, &d), RK_TIMEOUT);
  took = seconds_now() - start;
  CHECK(took >= (double)TIMEOUT_MICROS / 1e6 * 0.9 && took < (double)TIMEOUT_MICROS / 1e6 + SLACK_SECONDS);
  CHECK_OK(rk_redis_limiter_check(closed, "k", 1, 1, &d));
  CHECK(!d.allowed);
  CHECK_OK(rk_redis_limiter_check(open, "k", 1, 1, &d));
  CHECK(d.allowed);
  kill(server, SIGCONT);
  back = seconds_until_decided(err);
  fprintf(stderr, "    back on Redis %.3f s after a stall\n", back);
  CHECK(back < BACK_WITHIN_SECONDS);

  rk_redis_limiter_free(err);
  rk_redis_limiter_free(closed);
  rk_redis_limiter_free(open);
  rk_redis_limiter_free(share);
  rk_redis_limiter_free(forgetful);
  rk_redis_leased_limiter_free(leased);
  rk_redis_divided_limiter_free(divided);
  rk_redis_rate_limiter_free(guava);
  rk_redis_membership_free(m1);
  rk_redis_membership_free(m2);
  rk_redis_store_free(store);
  frozen_calls_take_at_most_their_timeout();
  /* The runtime drops the connections on its own thread, and reconnects
   * under way finish there first: give it the server's end of them, and
   * a moment, so that valgrind sees every block released at exit. */
  kill_server();
  sleep_micros(500000);
  return check_summary("test_redis_outage");
}
