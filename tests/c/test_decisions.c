/*
 * rk_decision's HTTP fields (RateLimit, RateLimit-Policy, Retry-After,
 * after draft-ietf-httpapi-ratelimit-headers), written into caller
 * buffers: the values, the size query, a buffer too small, and the names
 * a Structured Field String cannot carry.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "check.h"

typedef rk_status (*write_fn)(const rk_decision *, const char *, char *, size_t, size_t *);

/* The field `write` makes for `d` under `name`, through a size query and
 * a buffer of exactly the size asked for; "(error)" when it fails. */
static char *field_of(write_fn write, const rk_decision *d, const char *name) {
  size_t len = 12345;
  if (write(d, name, NULL, 0, &len) != RK_OK) return NULL;
  char *buf = malloc(len + 1);
  if (buf == NULL) return NULL;
  size_t written = 0;
  CHECK_OK(write(d, name, buf, len + 1, &written));
  CHECK_I64(written, len);
  CHECK_I64(strlen(buf), len);
  return buf;
}

#define CHECK_FIELD(write, d, name, expected) \
  do {                                         \
    char *got_ = field_of(write, &(d), name);  \
    CHECK_STR(got_, expected);                 \
    free(got_);                                \
  } while (0)

static char *retry_after(const rk_decision *d) {
  char *buf = malloc(21); /* always enough */
  size_t len = 99;
  CHECK_OK(rk_decision_write_retry_after(d, buf, 21, &len));
  CHECK_I64(len, strlen(buf));
  return buf;
}

#define CHECK_RETRY_AFTER(d, expected) \
  do {                                 \
    char *got_ = retry_after(&(d));    \
    CHECK_STR(got_, expected);         \
    free(got_);                        \
  } while (0)

static void fields(void) {
  rk_decision d = {.allowed = true, .limit = 100, .remaining = 50, .reset_after_micros = 29500000,
                   .window_micros = 60000000};
  CHECK_FIELD(rk_decision_write_ratelimit, d, "default", "\"default\";r=50;t=30");
  CHECK_FIELD(rk_decision_write_ratelimit_policy, d, "default", "\"default\";q=100;w=60");
  CHECK_RETRY_AFTER(d, ""); /* admitted: no Retry-After */

  /* Refused with a wait: seconds rounded up, so a client is never early. */
  rk_decision refused = {.allowed = false, .limit = 10, .remaining = 0, .retry_after_micros = 1000001,
                         .reset_after_micros = 2000000, .window_micros = 1000000};
  CHECK_RETRY_AFTER(refused, "2");
  refused.retry_after_micros = 1000000;
  CHECK_RETRY_AFTER(refused, "1");
  refused.retry_after_micros = 1;
  CHECK_RETRY_AFTER(refused, "1");
  refused.retry_after_micros = INT64_MAX - 1;
  CHECK_RETRY_AFTER(refused, "9223372036855");

  /* Never: no Retry-After, no t, no w; quotes and backslashes escaped. */
  rk_decision never = {.allowed = false, .limit = 5, .retry_after_micros = RK_NEVER, .reset_after_micros = RK_NEVER,
                       .window_micros = RK_NEVER};
  CHECK_RETRY_AFTER(never, "");
  CHECK_FIELD(rk_decision_write_ratelimit, never, "a \"quoted\" \\ name", "\"a \\\"quoted\\\" \\\\ name\";r=0");
  CHECK_FIELD(rk_decision_write_ratelimit_policy, never, "p", "\"p\";q=5");
  /* A window under a second is still w=1, as the draft wants. */
  rk_decision short_window = {.allowed = true, .limit = 1, .remaining = 1, .window_micros = 10};
  CHECK_FIELD(rk_decision_write_ratelimit_policy, short_window, "p", "\"p\";q=1;w=1");
  /* An empty name is a valid SF String. */
  CHECK_FIELD(rk_decision_write_ratelimit, short_window, "", "\"\";r=1;t=0");
}

/* From a real decision: a fixed window's. */
static void from_a_limiter(void) {
  rk_manual_clock *clock = NULL;
  rk_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_limiter_new_fixed_window(3, 60000000, clock, &limiter));
  if (limiter == NULL) return;
  CHECK_OK(rk_manual_clock_advance_micros(clock, 500000));
  rk_decision d;
  CHECK_OK(rk_limiter_check(limiter, 3, &d));
  CHECK_FIELD(rk_decision_write_ratelimit, d, "api", "\"api\";r=0;t=60");
  CHECK_OK(rk_limiter_check(limiter, 1, &d));
  CHECK(!d.allowed);
  CHECK_RETRY_AFTER(d, "60"); /* 59.5 s, rounded up */
  CHECK_FIELD(rk_decision_write_ratelimit_policy, d, "api", "\"api\";q=3;w=60");
  rk_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* Ask for the size with buf_len 0; a buffer one byte short gets nothing. */
static void buffer_protocol(void) {
  rk_decision d = {.allowed = true, .limit = 100, .remaining = 50, .reset_after_micros = 29500000,
                   .window_micros = 60000000};
  const char *expected = "\"default\";r=50;t=30";
  size_t n = strlen(expected);
  size_t len = 777;
  CHECK_OK(rk_decision_write_ratelimit(&d, "default", NULL, 0, &len));
  CHECK_I64(len, n);
  /* buf_len 0 with a buffer is a size query too: nothing written. */
  char buf[64];
  memset(buf, 'x', sizeof buf);
  len = 777;
  CHECK_OK(rk_decision_write_ratelimit(&d, "default", buf, 0, &len));
  CHECK_I64(len, n);
  CHECK(buf[0] == 'x');
  /* One byte short (no room for the NUL): nothing written at all. */
  len = 777;
  CHECK_STATUS(rk_decision_write_ratelimit(&d, "default", buf, n, &len), RK_BUFFER_TOO_SMALL);
  CHECK_STR(rk_last_error_argument(), "buf_len");
  CHECK_STR(rk_last_error_message(),
            "rk_decision_write_ratelimit: buf_len = 19: the buffer must hold 20 bytes (the NUL included)");
  CHECK_I64(len, 777);
  CHECK(buf[0] == 'x' && buf[n - 1] == 'x');
  CHECK_STATUS(rk_decision_write_ratelimit_policy(&d, "default", buf, 1, &len), RK_BUFFER_TOO_SMALL);
  rk_decision refused = {.allowed = false, .limit = 1, .retry_after_micros = 5000000};
  CHECK_STATUS(rk_decision_write_retry_after(&refused, buf, 1, &len), RK_BUFFER_TOO_SMALL);
  CHECK(buf[0] == 'x');
  /* Exactly enough. */
  CHECK_OK(rk_decision_write_ratelimit(&d, "default", buf, n + 1, &len));
  CHECK_STR(buf, expected);
  CHECK_I64(len, n);
  /* An empty Retry-After fits in one byte. */
  CHECK_OK(rk_decision_write_retry_after(&d, buf, 1, &len));
  CHECK_I64(len, 0);
  CHECK_STR(buf, "");

  /* The documented bound: 2 * strlen(name) + 64 bytes are always enough,
   * even for the widest numbers and a name that is all quotes. */
  char name[101];
  memset(name, '"', 100);
  name[100] = '\0';
  rk_decision widest = {.allowed = false, .limit = INT64_MAX, .remaining = INT64_MAX,
                        .retry_after_micros = INT64_MAX - 1, .reset_after_micros = INT64_MAX - 1,
                        .window_micros = INT64_MAX - 1};
  char big[2 * 100 + 64];
  CHECK_OK(rk_decision_write_ratelimit(&widest, name, big, sizeof big, &len));
  CHECK_OK(rk_decision_write_ratelimit_policy(&widest, name, big, sizeof big, &len));
  CHECK(len < sizeof big);
}

/* Several policies in one field: a composite's parts. */
static void several_policies(void) {
  rk_manual_clock *clock = NULL;
  rk_composite_limiter *limiter = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  const rk_limiter_spec limits[] = {
      {.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 10.0, .burst = 10},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 1000, .window_micros = 3600000000},
  };
  CHECK_OK(rk_composite_limiter_new(limits, 2, clock, &limiter));
  if (limiter == NULL) return;
  rk_decision d, parts[2];
  CHECK_OK(rk_composite_limiter_check_each(limiter, 1, &d, parts, 2));
  const char *names[] = {"per-second", "per-hour"};
  char buf[256];
  size_t len = 0;
  CHECK_OK(rk_decisions_write_ratelimit(parts, names, 2, buf, sizeof buf, &len));
  CHECK_STR(buf, "\"per-second\";r=9;t=1, \"per-hour\";r=999;t=3600");
  CHECK_I64(len, strlen(buf));
  CHECK_OK(rk_decisions_write_ratelimit_policy(parts, names, 2, buf, sizeof buf, &len));
  CHECK_STR(buf, "\"per-second\";q=10;w=1, \"per-hour\";q=1000;w=3600");
  /* One policy is the single-decision field. The combined decision is the
   * part with the fewest left, whole again when the slowest part is. */
  CHECK_OK(rk_decisions_write_ratelimit(&d, names, 1, buf, sizeof buf, &len));
  CHECK_STR(buf, "\"per-second\";r=9;t=3600");
  /* None: the empty string, and the arrays may be NULL. */
  CHECK_OK(rk_decisions_write_ratelimit(NULL, NULL, 0, buf, sizeof buf, &len));
  CHECK_STR(buf, "");
  CHECK_I64(len, 0);
  /* The size protocol holds here too. */
  CHECK_OK(rk_decisions_write_ratelimit_policy(parts, names, 2, NULL, 0, &len));
  CHECK_I64(len, strlen("\"per-second\";q=10;w=1, \"per-hour\";q=1000;w=3600"));
  CHECK_STATUS(rk_decisions_write_ratelimit_policy(parts, names, 2, buf, len, &len), RK_BUFFER_TOO_SMALL);
  rk_composite_limiter_free(limiter);
  rk_manual_clock_free(clock);
}

/* Names a Structured Field String cannot carry, and NULLs. */
static void bad_names_and_nulls(void) {
  rk_decision d = {.allowed = true, .limit = 1, .remaining = 1};
  char buf[64] = "untouched";
  size_t len = 777;
  CHECK_STATUS(rk_decision_write_ratelimit(&d, "tab\there", buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "name");
  CHECK_STR(rk_last_error_message(), "rk_decision_write_ratelimit: invalid argument name = 9: must be printable ASCII "
                                     "(the value is the first byte that is not)");
  CHECK_STATUS(rk_decision_write_ratelimit_policy(&d, "caf\xc3\xa9", buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(), "rk_decision_write_ratelimit_policy: invalid argument name = 195: must be "
                                     "printable ASCII (the value is the first byte that is not)");
  CHECK_STATUS(rk_decision_write_ratelimit(&d, "\x7f", buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(buf, "untouched");
  CHECK_I64(len, 777);

  const char *names[] = {"fine", "new\nline"};
  rk_decision two[2] = {d, d};
  CHECK_STATUS(rk_decisions_write_ratelimit(two, names, 2, buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "name");
  CHECK_STR(rk_last_error_message(), "rk_decisions_write_ratelimit: names[1]: invalid argument name = 10: must be "
                                     "printable ASCII (the value is the first byte that is not)");
  const char *with_null[] = {NULL, "fine"};
  CHECK_STATUS(rk_decisions_write_ratelimit_policy(two, with_null, 2, buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "names");
  CHECK_STR(rk_last_error_message(), "rk_decisions_write_ratelimit_policy: names[0]: names is NULL");

  CHECK_STATUS(rk_decision_write_ratelimit(NULL, "a", buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "decision");
  CHECK_STATUS(rk_decision_write_ratelimit_policy(&d, NULL, buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "name");
  CHECK_STATUS(rk_decision_write_ratelimit(&d, "a", buf, sizeof buf, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_len");
  CHECK_STATUS(rk_decision_write_ratelimit(&d, "a", NULL, 8, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "buf");
  CHECK_STATUS(rk_decision_write_retry_after(NULL, buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "decision");
  CHECK_STATUS(rk_decision_write_retry_after(&d, buf, sizeof buf, NULL), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "out_len");
  CHECK_STATUS(rk_decisions_write_ratelimit(NULL, names, 1, buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "decisions");
  CHECK_STATUS(rk_decisions_write_ratelimit_policy(two, NULL, 1, buf, sizeof buf, &len), RK_NULL_POINTER);
  CHECK_STR(rk_last_error_argument(), "names");
  CHECK_STR(buf, "untouched");
  CHECK_I64(len, 777);
}

int main(void) {
  fields();
  from_a_limiter();
  buffer_protocol();
  several_policies();
  bad_names_and_nulls();
  return check_summary("test_decisions");
}
