/*
 * What the Redis tests share: the server they run against (from
 * tests/redis/with-redis), names no other run uses, clocks, and a waiter
 * for the callbacks of the _async functions.
 */
#ifndef RK_TESTS_REDIS_SUPPORT_H
#define RK_TESTS_REDIS_SUPPORT_H

#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* An environment variable the test cannot run without: a missing one is a
 * failure, never a skip (run the test under tests/redis/with-redis). */
static inline const char *required_env(const char *name) {
  const char *value = getenv(name);
  if (value == NULL || value[0] == '\0') {
    fprintf(stderr, "%s is not set: run this test under tests/redis/with-redis%s\n", name,
            strcmp(name, "RATEKEEPER_REDIS_CLUSTER") == 0           ? " --cluster"
            : strncmp(name, "RATEKEEPER_REDIS_TLS_", 21) == 0 ? " --tls"
                                                              : "");
    exit(2);
  }
  return value;
}

/* A limiter name no other run against the same server uses (the same
 * server serves the shared, static, valgrind and ASan runs): the process
 * id and the start time, then `what`. */
static inline const char *unique_name(char *buf, size_t len, const char *what) {
  static long long nonce;
  if (nonce == 0) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    nonce = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
  }
  snprintf(buf, len, "c-test:%ld:%lld:%s", (long)getpid(), nonce, what);
  return buf;
}

static inline double seconds_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static inline void sleep_micros(long micros) {
  struct timespec t = {micros / 1000000, (micros % 1000000) * 1000};
  while (nanosleep(&t, &t) != 0) {
  }
}

/* One _async call's outcome, as its callback reported it. */
struct waiter {
  pthread_mutex_t lock;
  pthread_cond_t done;
  int calls;               /* how many times the callback ran (must be 1) */
  rk_status status;
  bool has_decision;       /* the callback got a decision pointer */
  rk_decision decision;
  bool reserved;
  int64_t wait_micros;
  char message[256];       /* rk_last_error_message() inside the callback */
  rk_status nested;        /* a blocking call made inside the callback */
  const void *nest_on;     /* the rk_redis_limiter to make it on, or NULL */
  pthread_t thread;        /* the thread the callback ran on */
};

static inline void waiter_init(struct waiter *w, const void *nest_on) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->lock, NULL);
  pthread_cond_init(&w->done, NULL);
  w->nest_on = nest_on;
  w->nested = RK_OK;
}

static inline void waiter_destroy(struct waiter *w) {
  pthread_mutex_destroy(&w->lock);
  pthread_cond_destroy(&w->done);
}

/* Waits for the callback, at most `seconds`; false on a timeout. */
static inline bool waiter_wait(struct waiter *w, double seconds) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  long long ns = deadline.tv_nsec + (long long)(seconds * 1e9);
  deadline.tv_sec += (time_t)(ns / 1000000000LL);
  deadline.tv_nsec = (long)(ns % 1000000000LL);
  pthread_mutex_lock(&w->lock);
  while (w->calls == 0) {
    if (pthread_cond_timedwait(&w->done, &w->lock, &deadline) != 0) break;
  }
  bool called = w->calls > 0;
  pthread_mutex_unlock(&w->lock);
  return called;
}

static inline void waiter_finish(struct waiter *w, rk_status status) {
  pthread_mutex_lock(&w->lock);
  w->calls++;
  w->status = status;
  w->thread = pthread_self();
  if (status != RK_OK) snprintf(w->message, sizeof w->message, "%s", rk_last_error_message());
  pthread_cond_signal(&w->done);
  pthread_mutex_unlock(&w->lock);
}

/* An rk_decision_callback. */
static inline void on_decision(void *user_data, rk_status status, const rk_decision *decision) {
  struct waiter *w = user_data;
  if (w->nest_on != NULL) {
    rk_decision ignored;
    w->nested = rk_redis_limiter_check(w->nest_on, "nested", 6, 1, &ignored);
  }
  if (decision != NULL) {
    w->has_decision = true;
    w->decision = *decision;
  }
  waiter_finish(w, status);
}

/* An rk_wait_callback. */
static inline void on_wait(void *user_data, rk_status status, bool reserved, int64_t wait_micros) {
  struct waiter *w = user_data;
  w->reserved = reserved;
  w->wait_micros = wait_micros;
  waiter_finish(w, status);
}

#endif /* RK_TESTS_REDIS_SUPPORT_H */
