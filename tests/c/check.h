/*
 * A minimal test harness for the C tests: CHECK macros that report the
 * failing expression with its file and line and carry on, and a summary
 * line "N passed, N failed" that sets the exit status.
 */
#ifndef RK_TESTS_CHECK_H
#define RK_TESTS_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ratekeeper.h"

static int check_passed;
static int check_failed;

static inline void check_report(int ok, const char *file, int line, const char *what) {
  if (ok) {
    check_passed++;
  } else {
    check_failed++;
    fprintf(stderr, "%s:%d: FAILED: %s\n", file, line, what);
  }
}

/* A condition that must hold. */
#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond)

/* A call that must return RK_OK; prints the library's message if not. */
#define CHECK_OK(call)                                                                        \
  do {                                                                                        \
    rk_status check_status_ = (call);                                                         \
    check_report(check_status_ == RK_OK, __FILE__, __LINE__, #call " == RK_OK");              \
    if (check_status_ != RK_OK)                                                               \
      fprintf(stderr, "    status %u: %s\n", (unsigned)check_status_, rk_last_error_message()); \
  } while (0)

/* A call that must return `expected`. */
#define CHECK_STATUS(call, expected)                                                           \
  do {                                                                                         \
    rk_status check_status_ = (call);                                                          \
    check_report(check_status_ == (expected), __FILE__, __LINE__, #call " == " #expected);     \
    if (check_status_ != (expected))                                                           \
      fprintf(stderr, "    got status %u (%s)\n", (unsigned)check_status_, rk_last_error_message()); \
  } while (0)

/* Two 64-bit integers that must be equal; prints both if not. */
#define CHECK_I64(actual, expected)                                                          \
  do {                                                                                       \
    int64_t check_a_ = (actual), check_e_ = (expected);                                      \
    check_report(check_a_ == check_e_, __FILE__, __LINE__, #actual " == " #expected);        \
    if (check_a_ != check_e_)                                                                \
      fprintf(stderr, "    got %" PRId64 ", expected %" PRId64 "\n", check_a_, check_e_);    \
  } while (0)

/* Two doubles that must be identical, bit for bit. */
#define CHECK_DOUBLE(actual, expected)                                                       \
  do {                                                                                       \
    double check_a_ = (actual), check_e_ = (expected);                                       \
    check_report(memcmp(&check_a_, &check_e_, sizeof check_a_) == 0, __FILE__, __LINE__,     \
                 #actual " == " #expected);                                                  \
    if (memcmp(&check_a_, &check_e_, sizeof check_a_) != 0)                                  \
      fprintf(stderr, "    got %.17g, expected %.17g\n", check_a_, check_e_);                \
  } while (0)

/* Two strings that must be equal (NULL equals only NULL). */
#define CHECK_STR(actual, expected)                                                           \
  do {                                                                                        \
    const char *check_a_ = (actual), *check_e_ = (expected);                                  \
    int check_same_ = (check_a_ == NULL || check_e_ == NULL) ? check_a_ == check_e_           \
                                                             : strcmp(check_a_, check_e_) == 0; \
    check_report(check_same_, __FILE__, __LINE__, #actual " == " #expected);                  \
    if (!check_same_)                                                                         \
      fprintf(stderr, "    got \"%s\", expected \"%s\"\n", check_a_ ? check_a_ : "(null)",    \
              check_e_ ? check_e_ : "(null)");                                                \
  } while (0)

/* Whether two decisions are the same, field by field (memcmp would also
 * compare the padding after `allowed`). */
static inline bool same_decision(const rk_decision *a, const rk_decision *b) {
  return a->allowed == b->allowed && a->limit == b->limit && a->remaining == b->remaining &&
         a->retry_after_micros == b->retry_after_micros && a->reset_after_micros == b->reset_after_micros &&
         a->wait_micros == b->wait_micros && a->window_micros == b->window_micros;
}

/* A decision whose seven fields must all be as expected; prints the ones
 * that are not. */
static inline void check_decision(const rk_decision *d, bool allowed, uint64_t limit, uint64_t remaining,
                                  int64_t retry_after, int64_t reset_after, int64_t wait, int64_t window,
                                  const char *file, int line, const char *what) {
  int ok = d->allowed == allowed && d->limit == limit && d->remaining == remaining &&
           d->retry_after_micros == retry_after && d->reset_after_micros == reset_after && d->wait_micros == wait &&
           d->window_micros == window;
  check_report(ok, file, line, what);
  if (!ok) {
    fprintf(stderr,
            "    got      {allowed %d, limit %" PRIu64 ", remaining %" PRIu64 ", retry_after %" PRId64
            ", reset_after %" PRId64 ", wait %" PRId64 ", window %" PRId64 "}\n",
            (int)d->allowed, d->limit, d->remaining, d->retry_after_micros, d->reset_after_micros, d->wait_micros,
            d->window_micros);
    fprintf(stderr,
            "    expected {allowed %d, limit %" PRIu64 ", remaining %" PRIu64 ", retry_after %" PRId64
            ", reset_after %" PRId64 ", wait %" PRId64 ", window %" PRId64 "}\n",
            (int)allowed, limit, remaining, retry_after, reset_after, wait, window);
  }
}

/* CHECK_DECISION(decision, allowed, limit, remaining, retry_after_micros,
 * reset_after_micros, wait_micros, window_micros) */
#define CHECK_DECISION(d, ...) check_decision(&(d), __VA_ARGS__, __FILE__, __LINE__, #d " == {" #__VA_ARGS__ "}")

/* Prints the summary line; returns the process's exit status. */
static inline int check_summary(const char *suite) {
  printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
  return check_failed == 0 ? 0 : 1;
}

#endif /* RK_TESTS_CHECK_H */
