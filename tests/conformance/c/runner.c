/*
 * The C runner of the cross-language conformance suite.
 *
 *   rk-conformance PATH...     (normally: tests/conformance/run c [PATH...])
 *
 * Reads vector files in the ratelimit-conformance/1 format
 * (tests/conformance/FORMAT.md), or directories of them (every *.json
 * below, sorted), and replays every case through the C API on a manual
 * clock, as the Rust runner (tests/conformance/rust) does through the Rust
 * API: the clock moves only by `sleep` steps and by the waits of the calls
 * that sleep (Guava's acquires, the token bucket's `wait`). Every algorithm
 * of FORMAT.md has its replay below: Guava's RateLimiter (rk_rate_limiter),
 * the token bucket and the other admission-style algorithms (rk_limiter,
 * built from an rk_limiter_spec as a C caller builds one), the markers
 * (rk_srtcm, rk_trtcm), the adaptive limits (rk_concurrency_limiter and
 * its permits), the load-driven ones (rk_bbr, rk_system_guard, on a
 * manual rk_load), Resilience4j's cycle limiter (rk_cycle_limiter, through
 * its non-blocking calls), Sentinel's flow rule (rk_flow_controller), the
 * composite (rk_composite_limiter), and the bad inputs'
 * keyed limiter (rk_keyed_limiter) and lone clock. Prints one line per
 * failing case, naming the first step that differed with the expected and
 * actual values, and a last line "N passed, N failed" (", N skipped" added
 * when some cases' `skip` names c). Exits 1 when a case failed, 2 on
 * unreadable input.
 *
 * Every expected error is checked in full (FORMAT.md, "Errors and bad
 * inputs"): its status, the argument rk_last_error_argument() names (C's
 * spelling: a duration's parameter is `..._micros`) and the text
 * rk_last_error_message() must contain. C has no values of the wrong type
 * and no durations in seconds: cases needing them skip C by their `skip`,
 * and a case that does not is replayed, and fails.
 *
 * JSON is parsed with cJSON, which reads every number as a double (with
 * strtod, so rates arrive correctly rounded). Integers beyond +-(2^53 - 1)
 * arrive as decimal strings and are parsed exactly with strtoll; a larger
 * integer written as a JSON number may have been rounded, so it is refused.
 */
#define _POSIX_C_SOURCE 200809L

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ratekeeper.h"

#define FORMAT "ratelimit-conformance/1"
/* This runner's name in a case's `skip`. */
#define LANGUAGE "c"
/* The largest integer a double holds exactly, with all below it. */
#define MAX_SAFE_INTEGER 9007199254740991.0

/* Why a case failed (or why a field could not be read). */
typedef struct {
  char text[1024];
} why_t;

/* Sets `why` and returns -1, so that helpers can `return fail(...)`. */
static int fail(why_t *why, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(why->text, sizeof why->text, format, args);
  va_end(args);
  return -1;
}

/* ---- Fields ---------------------------------------------------------- */

static const cJSON *field(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int str_field(const cJSON *obj, const char *key, const char **out, why_t *why) {
  const cJSON *v = field(obj, key);
  if (!cJSON_IsString(v)) return fail(why, "missing string field \"%s\"", key);
  *out = v->valuestring;
  return 0;
}

static int bool_field(const cJSON *obj, const char *key, bool *out, why_t *why) {
  const cJSON *v = field(obj, key);
  if (!cJSON_IsBool(v)) return fail(why, "missing boolean field \"%s\"", key);
  *out = cJSON_IsTrue(v);
  return 0;
}

/* A signed 64-bit integer: a JSON number within +-(2^53 - 1), or a decimal
 * string (FORMAT.md, "Numbers"). */
static int int_field(const cJSON *obj, const char *key, int64_t *out, why_t *why) {
  const cJSON *v = field(obj, key);
  if (cJSON_IsNumber(v)) {
    double d = v->valuedouble;
    if (d != floor(d) || fabs(d) > MAX_SAFE_INTEGER) {
      return fail(why, "field \"%s\" = %.17g is not an integer within +-(2^53 - 1) (larger ones must be strings)",
                  key, d);
    }
    *out = (int64_t)d;
    return 0;
  }
  if (cJSON_IsString(v)) {
    const char *s = v->valuestring;
    char *end = NULL;
    errno = 0;
    long long parsed = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0') return fail(why, "field \"%s\" = \"%s\" is not a 64-bit integer", key, s);
    *out = (int64_t)parsed;
    return 0;
  }
  return fail(why, "missing integer field \"%s\"", key);
}

/* A double: a JSON number, or "NaN", "Infinity", "-Infinity" (FORMAT.md,
 * "Special doubles"). */
static int double_field(const cJSON *obj, const char *key, double *out, why_t *why) {
  const cJSON *v = field(obj, key);
  if (cJSON_IsNumber(v)) {
    *out = v->valuedouble;
    return 0;
  }
  if (cJSON_IsString(v)) {
    if (strcmp(v->valuestring, "NaN") == 0) {
      *out = NAN;
      return 0;
    }
    if (strcmp(v->valuestring, "Infinity") == 0) {
      *out = INFINITY;
      return 0;
    }
    if (strcmp(v->valuestring, "-Infinity") == 0) {
      *out = -INFINITY;
      return 0;
    }
    return fail(why, "field \"%s\" = \"%s\" is not a double", key, v->valuestring);
  }
  return fail(why, "missing double field \"%s\"", key);
}

/* Bitwise equality, as FORMAT.md asks (so 0.0 != -0.0); every NaN equals
 * every other. */
static bool same_double(double a, double b) {
  if (isnan(a) && isnan(b)) return true;
  return memcmp(&a, &b, sizeof a) == 0;
}

/* A double as the vectors write it: the shortest decimal that reads back
 * as the same double, with ".0" when it is integral (as the Rust runner
 * prints it), or one of the special strings. */
static void show_double(double x, char *buf, size_t n) {
  if (isnan(x)) {
    snprintf(buf, n, "NaN");
    return;
  }
  if (isinf(x)) {
    snprintf(buf, n, x > 0 ? "Infinity" : "-Infinity");
    return;
  }
  for (int precision = 1; precision <= 17; precision++) {
    snprintf(buf, n, "%.*g", precision, x);
    if (strtod(buf, NULL) == x) break;
  }
  if (strpbrk(buf, ".e") == NULL) strncat(buf, ".0", n - strlen(buf) - 1);
}

/* A JSON value, compactly (for messages). */
static void show_json(const cJSON *v, char *buf, size_t n) {
  char *printed = cJSON_PrintUnformatted(v);
  snprintf(buf, n, "%s", printed ? printed : "?");
  cJSON_free(printed);
}

/* A step's fields other than its expected outcome: "(acquire permits=1)". */
static void describe(const cJSON *step, char *buf, size_t n) {
  size_t used = 0;
  used += (size_t)snprintf(buf + used, n - used, "(");
  bool first = true;
  const cJSON *item = NULL;
  cJSON_ArrayForEach(item, step) {
    const char *k = item->string;
    /* The expected outcomes, as the Rust runner leaves them out. */
    static const char *const outcomes[] = {"wait_micros", "acquired", "error", "decision", "allowed",
                                           "ok",          "delay_micros", "tokens", "color", "parts"};
    bool outcome = false;
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++) outcome = outcome || strcmp(k, outcomes[i]) == 0;
    if (outcome) continue;
    if (used >= n) break;
    char value[128];
    if (strcmp(k, "op") == 0 && cJSON_IsString(item)) {
      snprintf(value, sizeof value, "%s", item->valuestring);
    } else {
      char json[100];
      show_json(item, json, sizeof json);
      snprintf(value, sizeof value, "%s=%s", k, json);
    }
    used += (size_t)snprintf(buf + used, n - used, "%s%s", first ? "" : " ", value);
    first = false;
  }
  if (used < n) snprintf(buf + used, n - used, ")");
}

/* "wait_micros 200000": the first expected result a step carries. */
static void expected_value(const cJSON *step, char *buf, size_t n) {
  const char *keys[] = {"wait_micros", "acquired", "permits_per_second"};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    const cJSON *v = field(step, keys[i]);
    if (v != NULL) {
      char json[100];
      show_json(v, json, sizeof json);
      snprintf(buf, n, "%s %s", keys[i], json);
      return;
    }
  }
  snprintf(buf, n, "success");
}

/* ---- What every replay shares ----------------------------------------- */

/* The C parameter that carries the library's argument `name` (FORMAT.md,
 * "Errors and bad inputs"): a duration's is `<name>_micros` when `fields`
 * (the limiter's or step's) give it so; a few have names of their own. */
static void c_argument(const char *name, const cJSON *fields, char *buf, size_t n) {
  static const char *const renamed[][2] = {{"policy_name", "name"}, {"seconds", "micros"}, {"limits", "limits_len"}};
  for (size_t i = 0; i < sizeof renamed / sizeof renamed[0]; i++) {
    if (strcmp(name, renamed[i][0]) == 0) {
      snprintf(buf, n, "%s", renamed[i][1]);
      return;
    }
  }
  snprintf(buf, n, "%s_micros", name);
  if (field(fields, buf) == NULL) snprintf(buf, n, "%s", name);
}

/* Checks the status of a call that `expected` (a case, whose `kind_key` is
 * "create_error", or a step, "error") expects to fail: its kind (C has only
 * invalid_argument), the argument it names and its message. The call was
 * the last one made, so the last error is its own. */
static int check_error(const cJSON *expected, const char *kind_key, rk_status status, const cJSON *fields, why_t *why) {
  const cJSON *kind_value = field(expected, kind_key);
  const char *kind = cJSON_IsString(kind_value) ? kind_value->valuestring : "?";
  if (strcmp(kind, "invalid_argument") != 0) {
    return fail(why, "expected error %s, which C cannot raise (the case must skip c)", kind);
  }
  if (status == RK_OK) return fail(why, "expected error %s, got success", kind);
  if (status != RK_INVALID_ARGUMENT) return fail(why, "expected error %s, got error: %s", kind, rk_last_error_message());
  const cJSON *argument = field(expected, "argument");
  if (argument != NULL) {
    if (!cJSON_IsString(argument)) return fail(why, "\"argument\" is not a string");
    char want[64];
    c_argument(argument->valuestring, fields, want, sizeof want);
    const char *got = rk_last_error_argument();
    if (got == NULL || strcmp(got, want) != 0) {
      return fail(why, "expected an error naming %s, got one naming %s: %s", want, got ? got : "nothing",
                  rk_last_error_message());
    }
  }
  const cJSON *text = field(expected, "message_contains");
  if (text != NULL) {
    if (!cJSON_IsString(text)) return fail(why, "\"message_contains\" is not a string");
    if (strstr(rk_last_error_message(), text->valuestring) == NULL) {
      return fail(why, "expected an error whose message contains \"%s\", got: %s", text->valuestring,
                  rk_last_error_message());
    }
  }
  return 0;
}

/* Replays one step against a family's state. Returns 0 when the step gave
 * the expected result. */
typedef int (*step_fn)(void *replay, const cJSON *step, why_t *why);

/* The shape every family shares: when the case expects the creation to
 * fail, checks that `created` is RK_INVALID_ARGUMENT; otherwise replays each
 * step, stopping at the first that fails (reported with its index and
 * inputs). `created` is the status of the creating call, just made, so the
 * last error is still its own. */
static int replay_steps(const cJSON *c, rk_status created, void *replay, step_fn step, why_t *why) {
  const cJSON *create_error = field(c, "create_error");
  if (create_error != NULL) {
    char expected[64];
    show_json(create_error, expected, sizeof expected);
    if (created == RK_OK) return fail(why, "create: expected error %s, got a limiter", expected);
    /* A concurrency limiter's durations are its policy's fields. */
    const cJSON *spec = field(c, "limiter");
    const cJSON *fields = field(spec, "policy") != NULL ? field(spec, "policy") : spec;
    why_t error_why;
    if (check_error(c, "create_error", created, fields, &error_why) != 0) {
      return fail(why, "create: %s", error_why.text);
    }
    return 0;
  }
  if (created != RK_OK) return fail(why, "create: expected a limiter, got error: %s", rk_last_error_message());
  const cJSON *steps = field(c, "steps");
  if (!cJSON_IsArray(steps)) return fail(why, "case has no \"steps\"");
  int i = 0;
  const cJSON *s = NULL;
  cJSON_ArrayForEach(s, steps) {
    why_t step_why;
    if (step(replay, s, &step_why) != 0) {
      char description[256];
      describe(s, description, sizeof description);
      return fail(why, "step %d %s: %s", i, description, step_why.text);
    }
    i++;
  }
  return 0;
}

/* For a call that a step may expect to fail ("error": "invalid_argument").
 * Returns 0 when the step expects success and got it (its value is to be
 * compared next), 1 when it expected this error and got it (the step
 * passed), and -1 with `why` set otherwise. */
static int outcome(const cJSON *step, rk_status status, why_t *why) {
  const cJSON *error = field(step, "error");
  if (error == NULL) {
    if (status == RK_OK) return 0;
    return fail(why, "expected success, got error: %s", rk_last_error_message());
  }
  return check_error(step, "error", status, step, why) == 0 ? 1 : -1;
}

/* Two integers that must be equal. */
static int expect_i64(const char *what, int64_t expected, int64_t actual, why_t *why) {
  if (expected == actual) return 0;
  return fail(why, "expected %s %" PRId64 ", got %" PRId64, what, expected, actual);
}

/* A count from the library (uint64_t, at most INT64_MAX) against the
 * vector's integer. */
static int expect_count(const char *what, int64_t expected, uint64_t actual, why_t *why) {
  if (expected >= 0 && (uint64_t)expected == actual) return 0;
  return fail(why, "expected %s %" PRId64 ", got %" PRIu64, what, expected, actual);
}

static int expect_bool(const char *what, bool expected, bool actual, why_t *why) {
  if (expected == actual) return 0;
  return fail(why, "expected %s %s, got %s", what, expected ? "true" : "false", actual ? "true" : "false");
}

/* A double compared bit for bit. */
static int expect_double(const char *what, double expected, double actual, why_t *why) {
  if (same_double(expected, actual)) return 0;
  char e[40], a[40];
  show_double(expected, e, sizeof e);
  show_double(actual, a, sizeof a);
  return fail(why, "expected %s %s, got %s", what, e, a);
}

/* A decision object (FORMAT.md, "Decisions"). */
static int decision_value(const cJSON *d, rk_decision *out, why_t *why) {
  if (!cJSON_IsObject(d)) return fail(why, "missing decision");
  int64_t limit, remaining;
  if (bool_field(d, "allowed", &out->allowed, why) != 0 || int_field(d, "limit", &limit, why) != 0 ||
      int_field(d, "remaining", &remaining, why) != 0 ||
      int_field(d, "retry_after_micros", &out->retry_after_micros, why) != 0 ||
      int_field(d, "reset_after_micros", &out->reset_after_micros, why) != 0 ||
      int_field(d, "wait_micros", &out->wait_micros, why) != 0 ||
      int_field(d, "window_micros", &out->window_micros, why) != 0) {
    return -1;
  }
  if (limit < 0 || remaining < 0) return fail(why, "a decision's limit and remaining are never negative");
  out->limit = (uint64_t)limit;
  out->remaining = (uint64_t)remaining;
  return 0;
}

/* Compares an expected decision with the actual one, naming every field
 * that differs. `label` prefixes the message ("part 1: "). */
static int compare_decision(const char *label, const rk_decision *e, const rk_decision *a, why_t *why) {
  char diffs[768] = "";
  size_t used = 0;
#define RK_DIFF(name, fmt, ev, av)                                                                          \
  if ((ev) != (av) && used < sizeof diffs)                                                                  \
    used += (size_t)snprintf(diffs + used, sizeof diffs - used, "%s" name ": expected " fmt ", got " fmt, \
                             used ? "; " : "", ev, av);
  RK_DIFF("allowed", "%d", (int)e->allowed, (int)a->allowed)
  RK_DIFF("limit", "%" PRIu64, e->limit, a->limit)
  RK_DIFF("remaining", "%" PRIu64, e->remaining, a->remaining)
  RK_DIFF("retry_after_micros", "%" PRId64, e->retry_after_micros, a->retry_after_micros)
  RK_DIFF("reset_after_micros", "%" PRId64, e->reset_after_micros, a->reset_after_micros)
  RK_DIFF("wait_micros", "%" PRId64, e->wait_micros, a->wait_micros)
  RK_DIFF("window_micros", "%" PRId64, e->window_micros, a->window_micros)
#undef RK_DIFF
  if (used == 0) return 0;
  return fail(why, "%sdecision differs: %s", label, diffs);
}

/* A step's expected `decision` against the actual one. */
static int expect_decision(const cJSON *step, const rk_decision *actual, why_t *why) {
  rk_decision expected;
  if (decision_value(field(step, "decision"), &expected, why) != 0) return -1;
  return compare_decision("", &expected, actual, why);
}

/* A `sleep` step: moves the clock. */
static int sleep_step(const rk_manual_clock *clock, const cJSON *step, why_t *why) {
  int64_t micros;
  if (int_field(step, "micros", &micros, why) != 0) return -1;
  if (rk_manual_clock_advance_micros(clock, micros) != RK_OK) {
    return fail(why, "advancing the clock failed: %s", rk_last_error_message());
  }
  return 0;
}

/* A growable array of pointers (reservations, permits), in the order the
 * steps made them, for later steps to refer to by index. */
typedef struct {
  void **items;
  size_t len, cap;
} handles;

static void handles_push(handles *h, void *item) {
  if (h->len == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 16;
    void **grown = realloc(h->items, h->cap * sizeof *grown);
    if (grown == NULL) {
      perror("realloc");
      exit(2);
    }
    h->items = grown;
  }
  h->items[h->len++] = item;
}

/* The `index`-th handle (a step's integer field `key`), or NULL with `why`
 * set. */
static void *handles_at(const handles *h, const cJSON *step, const char *key, const char *what, why_t *why) {
  int64_t index;
  if (int_field(step, key, &index, why) != 0) return NULL;
  if (index < 0 || (uint64_t)index >= h->len) {
    fail(why, "no %s #%" PRId64, what, index);
    return NULL;
  }
  void *item = h->items[index];
  if (item == NULL) fail(why, "%s #%" PRId64 " was already given back", what, index);
  return item;
}

/* ---- Guava's RateLimiter (smooth_bursty, smooth_warming_up) ------------ */

typedef struct {
  rk_manual_clock *clock;
  rk_rate_limiter *limiter;
} smooth_replay;

/* One step. Returns 0 when it gave the expected result. */
static int smooth_step(void *replay, const cJSON *step, why_t *why) {
  const smooth_replay *r = replay;
  const rk_rate_limiter *limiter = r->limiter;
  const cJSON *error_field = field(step, "error");
  const char *expects_error = NULL;
  if (error_field != NULL) expects_error = cJSON_IsString(error_field) ? error_field->valuestring : "?";
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;

  rk_status status;
  char actual[128] = ""; /* the result, when the call succeeded but differed */
  if (strcmp(op, "sleep") == 0) {
    return sleep_step(r->clock, step, why);
  } else if (strcmp(op, "acquire") == 0) {
    int64_t expected = 0, permits, wait = -1;
    if (expects_error == NULL && int_field(step, "wait_micros", &expected, why) != 0) return -1;
    if (int_field(step, "permits", &permits, why) != 0) return -1;
    status = rk_rate_limiter_acquire_micros(limiter, permits, &wait);
    if (status == RK_OK) {
      if (expects_error == NULL && wait == expected) return 0;
      snprintf(actual, sizeof actual, "wait_micros %" PRId64, wait);
    }
  } else if (strcmp(op, "try_acquire") == 0) {
    bool expected = false, acquired = false;
    int64_t permits, timeout;
    if (expects_error == NULL && bool_field(step, "acquired", &expected, why) != 0) return -1;
    if (int_field(step, "permits", &permits, why) != 0) return -1;
    if (int_field(step, "timeout_micros", &timeout, why) != 0) return -1;
    status = rk_rate_limiter_try_acquire(limiter, permits, timeout, &acquired);
    if (status == RK_OK) {
      if (expects_error == NULL && acquired == expected) return 0;
      snprintf(actual, sizeof actual, "acquired %s", acquired ? "true" : "false");
    }
  } else if (strcmp(op, "set_rate") == 0) {
    double rate;
    if (double_field(step, "permits_per_second", &rate, why) != 0) return -1;
    status = rk_rate_limiter_set_rate(limiter, rate);
    if (status == RK_OK) {
      if (expects_error == NULL) return 0;
      snprintf(actual, sizeof actual, "ok");
    }
  } else if (strcmp(op, "get_rate") == 0) {
    double expected, rate = 0.0;
    if (double_field(step, "permits_per_second", &expected, why) != 0) return -1;
    status = rk_rate_limiter_get_rate(limiter, &rate);
    if (status != RK_OK) return fail(why, "get_rate failed: %s", rk_last_error_message());
    return expect_double("permits_per_second", expected, rate, why);
  } else {
    return fail(why, "unknown op \"%s\"", op);
  }

  char expected[128];
  expected_value(step, expected, sizeof expected);
  if (expects_error != NULL) {
    if (status != RK_OK) return check_error(step, "error", status, step, why);
    return fail(why, "expected error %s, got %s", expects_error, actual);
  }
  if (status != RK_OK) return fail(why, "expected %s, got error: %s", expected, rk_last_error_message());
  return fail(why, "expected %s, got %s", expected, actual);
}

static int run_smooth(const char *algorithm, const cJSON *spec, const cJSON *c, why_t *why) {
  smooth_replay r = {NULL, NULL};
  if (rk_manual_clock_new(&r.clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  int result = -1;
  double rate;
  rk_status status = RK_OK;
  if (double_field(spec, "permits_per_second", &rate, why) != 0) goto done;
  if (strcmp(algorithm, "smooth_bursty") == 0) {
    double burst;
    if (double_field(spec, "max_burst_seconds", &burst, why) != 0) goto done;
    status = rk_rate_limiter_new_bursty(rate, burst, r.clock, &r.limiter);
  } else {
    int64_t warmup;
    double cold_factor;
    if (int_field(spec, "warmup_micros", &warmup, why) != 0) goto done;
    if (double_field(spec, "cold_factor", &cold_factor, why) != 0) goto done;
    status = rk_rate_limiter_new_warming_up(rate, warmup, cold_factor, r.clock, &r.limiter);
  }
  result = replay_steps(c, status, &r, smooth_step, why);
done:
  rk_rate_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Admission-style algorithms (rk_limiter) --------------------------- */

/* A vector's `limiter` object as an rk_limiter_spec, the way a C caller
 * fills one: the algorithm's fields, every other one 0. Negative counts
 * are passed as they are: rk_limiter_new() must refuse them. */
static int spec_value(const cJSON *obj, rk_limiter_spec *spec, why_t *why) {
  const char *algorithm = NULL;
  if (str_field(obj, "algorithm", &algorithm, why) != 0) return -1;
  *spec = (rk_limiter_spec){0};
  if (strcmp(algorithm, "token_bucket") == 0) {
    spec->algorithm = RK_ALGORITHM_TOKEN_BUCKET;
    if (double_field(obj, "rate", &spec->rate, why) != 0 || int_field(obj, "burst", &spec->burst, why) != 0) return -1;
  } else if (strcmp(algorithm, "gcra") == 0) {
    spec->algorithm = RK_ALGORITHM_GCRA;
    if (int_field(obj, "max_burst", &spec->max_burst, why) != 0 ||
        int_field(obj, "count_per_period", &spec->count_per_period, why) != 0 ||
        int_field(obj, "period_micros", &spec->period_micros, why) != 0) {
      return -1;
    }
  } else if (strcmp(algorithm, "leaky_bucket_meter") == 0) {
    spec->algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER;
    if (int_field(obj, "capacity", &spec->capacity, why) != 0 ||
        int_field(obj, "count_per_period", &spec->count_per_period, why) != 0 ||
        int_field(obj, "period_micros", &spec->period_micros, why) != 0) {
      return -1;
    }
  } else if (strcmp(algorithm, "leaky_bucket_queue") == 0) {
    spec->algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE;
    if (int_field(obj, "capacity", &spec->capacity, why) != 0 ||
        int_field(obj, "interval_micros", &spec->interval_micros, why) != 0) {
      return -1;
    }
    /* Optional: left out, the field stays 0, the registry's default. */
    if (field(obj, "slack") != NULL && int_field(obj, "slack", &spec->slack, why) != 0) return -1;
  } else {
    if (strcmp(algorithm, "fixed_window") == 0) {
      spec->algorithm = RK_ALGORITHM_FIXED_WINDOW;
    } else if (strcmp(algorithm, "sliding_window") == 0) {
      spec->algorithm = RK_ALGORITHM_SLIDING_WINDOW;
      if (int_field(obj, "sub_windows", &spec->sub_windows, why) != 0) return -1;
    } else if (strcmp(algorithm, "sliding_log") == 0) {
      spec->algorithm = RK_ALGORITHM_SLIDING_LOG;
    } else if (strcmp(algorithm, "sliding_window_counter") == 0) {
      spec->algorithm = RK_ALGORITHM_SLIDING_WINDOW_COUNTER;
    } else {
      return fail(why, "\"%s\" is not an admission-style algorithm", algorithm);
    }
    if (int_field(obj, "limit", &spec->limit, why) != 0 || int_field(obj, "window_micros", &spec->window_micros, why) != 0) {
      return -1;
    }
  }
  return 0;
}

typedef struct {
  rk_manual_clock *clock;
  rk_limiter *limiter;
  handles reservations; /* token bucket: every reserve step's, in order */
} limiter_replay;

/* `check` and `peek`, which every admission-style algorithm has. Returns
 * 1 when `op` is neither. */
static int check_or_peek(const rk_limiter *limiter, const char *op, const cJSON *step, why_t *why) {
  bool check = strcmp(op, "check") == 0;
  if (!check && strcmp(op, "peek") != 0) return 1;
  int64_t cost;
  if (int_field(step, "cost", &cost, why) != 0) return -1;
  rk_decision d;
  rk_status status = check ? rk_limiter_check(limiter, cost, &d) : rk_limiter_peek(limiter, cost, &d);
  int o = outcome(step, status, why);
  return o != 0 ? (o > 0 ? 0 : -1) : expect_decision(step, &d, why);
}

/* A `policy_header` step: the RateLimit-Policy field of peek(0)'s decision
 * under the step's `policy_name`. */
static int policy_header_step(const rk_limiter *limiter, const cJSON *step, why_t *why) {
  const char *name = NULL;
  if (str_field(step, "policy_name", &name, why) != 0) return -1;
  rk_decision d;
  if (rk_limiter_peek(limiter, 0, &d) != RK_OK) return fail(why, "peek: %s", rk_last_error_message());
  char buf[256];
  size_t len = 0;
  int o = outcome(step, rk_decision_write_ratelimit_policy(&d, name, buf, sizeof buf, &len), why);
  return o < 0 ? -1 : 0;
}

static int admission_step(void *replay, const cJSON *step, why_t *why) {
  const limiter_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "policy_header") == 0) return policy_header_step(r->limiter, step, why);
  if (strcmp(op, "set_limit") == 0) {
    /* A window's: another algorithm's handle fails with RK_WRONG_ALGORITHM. */
    int64_t limit;
    if (int_field(step, "limit", &limit, why) != 0) return -1;
    return outcome(step, rk_window_set_limit(r->limiter, limit), why) < 0 ? -1 : 0;
  }
  int result = check_or_peek(r->limiter, op, step, why);
  return result == 1 ? fail(why, "unknown op \"%s\"", op) : result;
}

/* The token bucket: the admission ops, and Go's. */
static int token_bucket_step(void *replay, const cJSON *step, why_t *why) {
  limiter_replay *r = replay;
  const rk_limiter *bucket = r->limiter;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  int result = check_or_peek(bucket, op, step, why);
  if (result != 1) return result;

  int64_t n = 0;
  if (strcmp(op, "allow") == 0) {
    bool expected;
    rk_decision d;
    if (int_field(step, "n", &n, why) != 0) return -1;
    int o = outcome(step, rk_limiter_check(bucket, n, &d), why);
    if (o != 0) return o > 0 ? 0 : -1;
    if (bool_field(step, "allowed", &expected, why) != 0) return -1;
    return expect_bool("allowed", expected, d.allowed, why);
  }
  if (strcmp(op, "reserve") == 0) {
    rk_reservation *reservation = NULL;
    if (int_field(step, "n", &n, why) != 0) return -1;
    int o = outcome(step, rk_token_bucket_reserve(bucket, n, &reservation), why);
    if (o != 0) return o > 0 ? 0 : -1;
    handles_push(&r->reservations, reservation);
    bool expected_ok, ok = false;
    if (bool_field(step, "ok", &expected_ok, why) != 0) return -1;
    if (rk_reservation_ok(reservation, &ok) != RK_OK) return fail(why, "ok: %s", rk_last_error_message());
    if (expect_bool("ok", expected_ok, ok, why) != 0) return -1;
    if (!ok) return 0;
    int64_t expected_delay, delay = -1;
    if (int_field(step, "delay_micros", &expected_delay, why) != 0) return -1;
    if (rk_reservation_delay_micros(reservation, &delay) != RK_OK) {
      return fail(why, "delay: %s", rk_last_error_message());
    }
    return expect_i64("delay_micros", expected_delay, delay, why);
  }
  if (strcmp(op, "cancel") == 0) {
    rk_reservation *reservation = handles_at(&r->reservations, step, "reservation", "reservation", why);
    if (reservation == NULL) return -1;
    if (rk_reservation_cancel(reservation) != RK_OK) return fail(why, "cancel: %s", rk_last_error_message());
    return 0;
  }
  if (strcmp(op, "wait") == 0) {
    int64_t timeout;
    rk_decision d;
    if (int_field(step, "n", &n, why) != 0 || int_field(step, "timeout_micros", &timeout, why) != 0) return -1;
    /* It sleeps on the manual clock, which moves the clock by the wait. */
    int o = outcome(step, rk_token_bucket_wait(bucket, n, timeout, &d), why);
    if (o != 0) return o > 0 ? 0 : -1;
    bool expected_ok;
    if (bool_field(step, "ok", &expected_ok, why) != 0) return -1;
    if (expect_bool("ok", expected_ok, d.allowed, why) != 0) return -1;
    if (!expected_ok) return 0;
    int64_t expected_delay;
    if (int_field(step, "delay_micros", &expected_delay, why) != 0) return -1;
    return expect_i64("delay_micros", expected_delay, d.wait_micros, why);
  }
  if (strcmp(op, "set_rate") == 0) {
    double rate;
    if (double_field(step, "rate", &rate, why) != 0) return -1;
    return outcome(step, rk_token_bucket_set_rate(bucket, rate), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "set_burst") == 0) {
    int64_t burst;
    if (int_field(step, "burst", &burst, why) != 0) return -1;
    return outcome(step, rk_token_bucket_set_burst(bucket, burst), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "tokens") == 0 || strcmp(op, "rate") == 0) {
    bool tokens = strcmp(op, "tokens") == 0;
    double expected, actual = 0.0;
    if (double_field(step, op, &expected, why) != 0) return -1;
    rk_status status = tokens ? rk_token_bucket_tokens(bucket, &actual) : rk_token_bucket_rate(bucket, &actual);
    if (status != RK_OK) return fail(why, "%s: %s", op, rk_last_error_message());
    return expect_double(op, expected, actual, why);
  }
  if (strcmp(op, "burst") == 0) {
    int64_t expected;
    uint64_t burst = 0;
    if (int_field(step, "burst", &expected, why) != 0) return -1;
    if (rk_token_bucket_burst(bucket, &burst) != RK_OK) return fail(why, "burst: %s", rk_last_error_message());
    return expect_count("burst", expected, burst, why);
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_limiter(const char *algorithm, const cJSON *spec_obj, const cJSON *c, why_t *why) {
  limiter_replay r = {NULL, NULL, {0}};
  if (rk_manual_clock_new(&r.clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  int result = -1;
  rk_limiter_spec spec;
  if (spec_value(spec_obj, &spec, why) == 0) {
    rk_status status = rk_limiter_new(&spec, r.clock, &r.limiter);
    bool bucket = strcmp(algorithm, "token_bucket") == 0;
    result = replay_steps(c, status, &r, bucket ? token_bucket_step : admission_step, why);
  }
  for (size_t i = 0; i < r.reservations.len; i++) rk_reservation_free(r.reservations.items[i]);
  free(r.reservations.items);
  rk_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- The three-colour markers (srtcm, trtcm) -------------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_srtcm *srtcm; /* one of the two */
  rk_trtcm *trtcm;
} marker_replay;

static int color_value(const cJSON *step, const char *key, rk_color *out, why_t *why) {
  const char *name = NULL;
  if (str_field(step, key, &name, why) != 0) return -1;
  for (rk_color color = RK_COLOR_GREEN; color <= RK_COLOR_RED; color++) {
    if (strcmp(name, rk_color_name(color)) == 0) {
      *out = color;
      return 0;
    }
  }
  return fail(why, "%s \"%s\" is not a colour", key, name);
}

static int marker_step(void *replay, const cJSON *step, why_t *why) {
  const marker_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "mark") == 0 || strcmp(op, "mark_aware") == 0) {
    bool aware = strcmp(op, "mark_aware") == 0;
    int64_t bytes;
    rk_color pre = RK_COLOR_GREEN, color = 99, expected;
    if (int_field(step, "bytes", &bytes, why) != 0) return -1;
    if (aware && color_value(step, "pre_color", &pre, why) != 0) return -1;
    rk_status status;
    if (r->srtcm != NULL) {
      status = aware ? rk_srtcm_mark_aware(r->srtcm, bytes, pre, &color) : rk_srtcm_mark(r->srtcm, bytes, &color);
    } else {
      status = aware ? rk_trtcm_mark_aware(r->trtcm, bytes, pre, &color) : rk_trtcm_mark(r->trtcm, bytes, &color);
    }
    int o = outcome(step, status, why);
    if (o != 0) return o > 0 ? 0 : -1;
    if (color_value(step, "color", &expected, why) != 0) return -1;
    if (color == expected) return 0;
    return fail(why, "expected color %s, got %s", rk_color_name(expected), rk_color_name(color));
  }
  if (strcmp(op, "tokens") == 0) {
    const char *first = r->srtcm != NULL ? "committed" : "peak";
    const char *second = r->srtcm != NULL ? "excess" : "committed";
    uint64_t a = 0, b = 0;
    int64_t expected_a, expected_b;
    rk_status status = r->srtcm != NULL ? rk_srtcm_tokens(r->srtcm, &a, &b) : rk_trtcm_tokens(r->trtcm, &a, &b);
    if (status != RK_OK) return fail(why, "tokens: %s", rk_last_error_message());
    if (int_field(step, first, &expected_a, why) != 0 || int_field(step, second, &expected_b, why) != 0) return -1;
    if (expect_count(first, expected_a, a, why) != 0) return -1;
    return expect_count(second, expected_b, b, why);
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_marker(const char *algorithm, const cJSON *spec, const cJSON *c, why_t *why) {
  marker_replay r = {NULL, NULL, NULL};
  if (rk_manual_clock_new(&r.clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  int result = -1;
  int64_t cir, cbs;
  if (int_field(spec, "cir", &cir, why) == 0 && int_field(spec, "cbs", &cbs, why) == 0) {
    if (strcmp(algorithm, "srtcm") == 0) {
      int64_t ebs;
      if (int_field(spec, "ebs", &ebs, why) == 0) {
        rk_status status = rk_srtcm_new(cir, cbs, ebs, r.clock, &r.srtcm);
        result = replay_steps(c, status, &r, marker_step, why);
      }
    } else {
      int64_t pir, pbs;
      if (int_field(spec, "pir", &pir, why) == 0 && int_field(spec, "pbs", &pbs, why) == 0) {
        rk_status status = rk_trtcm_new(pir, pbs, cir, cbs, r.clock, &r.trtcm);
        result = replay_steps(c, status, &r, marker_step, why);
      }
    }
  }
  rk_srtcm_free(r.srtcm);
  rk_trtcm_free(r.trtcm);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Adaptive limits (gradient, aimd, concurrency) -------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_concurrency_limiter *limiter;
  handles permits; /* every admitted acquire's, in order; NULL once released */
} concurrency_replay;

/* Creates a concurrency limiter from a policy object ({"algorithm": "fixed"
 * | "gradient" | "aimd", ...}). Returns -1 on a malformed vector, else 0
 * with the creating call's status in *status. */
static int create_concurrency(const cJSON *policy, concurrency_replay *r, rk_status *status, why_t *why) {
  const char *algorithm = NULL;
  if (str_field(policy, "algorithm", &algorithm, why) != 0) return -1;
  if (strcmp(algorithm, "fixed") == 0) {
    int64_t limit;
    if (int_field(policy, "limit", &limit, why) != 0) return -1;
    *status = rk_concurrency_limiter_new_fixed(limit, r->clock, &r->limiter);
    return 0;
  }
  if (strcmp(algorithm, "gradient") == 0) {
    rk_gradient_config g;
    if (int_field(policy, "initial_limit", &g.initial_limit, why) != 0 ||
        int_field(policy, "min_limit", &g.min_limit, why) != 0 ||
        int_field(policy, "max_limit", &g.max_limit, why) != 0 ||
        int_field(policy, "queue_size", &g.queue_size, why) != 0 ||
        int_field(policy, "probe_interval", &g.probe_interval, why) != 0 ||
        double_field(policy, "smoothing", &g.smoothing, why) != 0 ||
        double_field(policy, "rtt_tolerance", &g.rtt_tolerance, why) != 0 ||
        double_field(policy, "backoff_ratio", &g.backoff_ratio, why) != 0) {
      return -1;
    }
    *status = rk_concurrency_limiter_new_gradient(&g, r->clock, &r->limiter);
    return 0;
  }
  if (strcmp(algorithm, "aimd") == 0) {
    rk_aimd_config a;
    if (int_field(policy, "initial_limit", &a.initial_limit, why) != 0 ||
        int_field(policy, "min_limit", &a.min_limit, why) != 0 ||
        int_field(policy, "max_limit", &a.max_limit, why) != 0 ||
        int_field(policy, "rtt_timeout_micros", &a.rtt_timeout_micros, why) != 0 ||
        double_field(policy, "backoff_ratio", &a.backoff_ratio, why) != 0) {
      return -1;
    }
    *status = rk_concurrency_limiter_new_aimd(&a, r->clock, &r->limiter);
    return 0;
  }
  return fail(why, "unknown policy \"%s\"", algorithm);
}

static int concurrency_step(void *replay, const cJSON *step, why_t *why) {
  concurrency_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  int64_t expected_limit;
  uint64_t limit = 0;
  if (strcmp(op, "sample") == 0) {
    int64_t rtt, in_flight;
    bool dropped;
    if (int_field(step, "rtt_micros", &rtt, why) != 0 || int_field(step, "in_flight", &in_flight, why) != 0 ||
        bool_field(step, "dropped", &dropped, why) != 0) {
      return -1;
    }
    int o = outcome(step, rk_concurrency_limiter_sample(r->limiter, rtt, in_flight, dropped, &limit), why);
    if (o != 0) return o > 0 ? 0 : -1;
    if (int_field(step, "limit", &expected_limit, why) != 0) return -1;
    return expect_count("limit", expected_limit, limit, why);
  }
  if (strcmp(op, "acquire") == 0) {
    rk_decision d;
    rk_permit *permit = NULL;
    if (rk_concurrency_limiter_try_acquire(r->limiter, &d, &permit) != RK_OK) {
      return fail(why, "acquire: %s", rk_last_error_message());
    }
    if (permit != NULL) handles_push(&r->permits, permit);
    if (d.allowed != (permit != NULL)) return fail(why, "a permit must come with an admission, and only then");
    return expect_decision(step, &d, why);
  }
  if (strcmp(op, "release") == 0) {
    const char *name = NULL;
    rk_outcome outcome_value;
    if (str_field(step, "outcome", &name, why) != 0) return -1;
    if (strcmp(name, "success") == 0) {
      outcome_value = RK_OUTCOME_SUCCESS;
    } else if (strcmp(name, "dropped") == 0) {
      outcome_value = RK_OUTCOME_DROPPED;
    } else if (strcmp(name, "ignored") == 0) {
      outcome_value = RK_OUTCOME_IGNORED;
    } else {
      return fail(why, "unknown outcome \"%s\"", name);
    }
    rk_permit *permit = handles_at(&r->permits, step, "permit", "permit", why);
    if (permit == NULL) return -1;
    if (rk_permit_release(permit, outcome_value, &limit) != RK_OK) {
      return fail(why, "release: %s", rk_last_error_message());
    }
    /* Released and freed: the index refers to nothing any more. */
    int64_t index;
    if (int_field(step, "permit", &index, why) != 0) return -1;
    r->permits.items[index] = NULL;
    if (int_field(step, "limit", &expected_limit, why) != 0) return -1;
    return expect_count("limit", expected_limit, limit, why);
  }
  if (strcmp(op, "state") == 0) {
    int64_t expected_in_flight;
    uint64_t in_flight = 0;
    if (rk_concurrency_limiter_limit(r->limiter, &limit) != RK_OK ||
        rk_concurrency_limiter_in_flight(r->limiter, &in_flight) != RK_OK) {
      return fail(why, "state: %s", rk_last_error_message());
    }
    if (int_field(step, "limit", &expected_limit, why) != 0 ||
        int_field(step, "in_flight", &expected_in_flight, why) != 0) {
      return -1;
    }
    if (expect_count("limit", expected_limit, limit, why) != 0) return -1;
    return expect_count("in_flight", expected_in_flight, in_flight, why);
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_concurrency(const char *algorithm, const cJSON *spec, const cJSON *c, why_t *why) {
  concurrency_replay r = {NULL, NULL, {0}};
  if (rk_manual_clock_new(&r.clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  int result = -1;
  /* `gradient` and `aimd` cases are a limiter with that policy, fed samples. */
  const cJSON *policy = strcmp(algorithm, "concurrency") == 0 ? field(spec, "policy") : spec;
  rk_status status = RK_OK;
  if (!cJSON_IsObject(policy)) {
    fail(why, "no \"policy\"");
  } else if (create_concurrency(policy, &r, &status, why) == 0) {
    result = replay_steps(c, status, &r, concurrency_step, why);
  }
  /* The permits the case did not give back. */
  for (size_t i = 0; i < r.permits.len; i++) {
    if (r.permits.items[i] != NULL && rk_permit_release(r.permits.items[i], RK_OUTCOME_IGNORED, NULL) != RK_OK) {
      result = fail(why, "releasing permit #%zu at the end: %s", i, rk_last_error_message());
    }
  }
  free(r.permits.items);
  rk_concurrency_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Load-driven limits (bbr, system_guard) --------------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_load *load; /* a manual signal, unknown at first */
  rk_bbr *bbr;
  rk_system_guard *guard;
  handles permits; /* every admitted acquire's, in order; NULL once released */
} load_replay;

/* A `load` step: sets the CPU usage, then the load average, stopping at
 * the first the signal refuses (the step may expect that error). */
static int load_step(const rk_load *load, const cJSON *step, why_t *why) {
  rk_status status = RK_OK;
  double value;
  if (field(step, "cpu_usage") != NULL) {
    if (double_field(step, "cpu_usage", &value, why) != 0) return -1;
    status = rk_manual_load_set_cpu_usage(load, value);
  }
  if (status == RK_OK && field(step, "load_average") != NULL) {
    if (double_field(step, "load_average", &value, why) != 0) return -1;
    status = rk_manual_load_set_load_average(load, value);
  }
  return outcome(step, status, why) < 0 ? -1 : 0;
}

/* The given-back permit at the step's `permit` index, forgotten by the
 * replay (the caller releases it). */
static void *take_permit(load_replay *r, const cJSON *step, why_t *why) {
  void *permit = handles_at(&r->permits, step, "permit", "permit", why);
  if (permit == NULL) return NULL;
  int64_t index;
  if (int_field(step, "permit", &index, why) != 0) return NULL;
  r->permits.items[index] = NULL;
  return permit;
}

/* An integer figure of a `stats` step against the library's count. */
static int stats_count(const cJSON *step, const char *key, uint64_t actual, why_t *why) {
  int64_t expected;
  if (int_field(step, key, &expected, why) != 0) return -1;
  return expect_count(key, expected, actual, why);
}

static int stats_double(const cJSON *step, const char *key, double actual, why_t *why) {
  double expected;
  if (double_field(step, key, &expected, why) != 0) return -1;
  return expect_double(key, expected, actual, why);
}

static int bbr_step(void *replay, const cJSON *step, why_t *why) {
  load_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "load") == 0) return load_step(r->load, step, why);
  if (strcmp(op, "acquire") == 0) {
    rk_decision d;
    rk_bbr_permit *permit = NULL;
    if (rk_bbr_try_acquire(r->bbr, &d, &permit) != RK_OK) return fail(why, "acquire: %s", rk_last_error_message());
    if (permit != NULL) handles_push(&r->permits, permit);
    if (d.allowed != (permit != NULL)) return fail(why, "a permit must come with an admission, and only then");
    return expect_decision(step, &d, why);
  }
  if (strcmp(op, "release") == 0) {
    rk_bbr_permit *permit = take_permit(r, step, why);
    if (permit == NULL) return -1;
    if (rk_bbr_permit_release(permit) != RK_OK) return fail(why, "release: %s", rk_last_error_message());
    return 0;
  }
  if (strcmp(op, "stats") == 0) {
    rk_bbr_stat s;
    if (rk_bbr_stats(r->bbr, &s) != RK_OK) return fail(why, "stats: %s", rk_last_error_message());
    if (stats_count(step, "in_flight", s.in_flight, why) != 0 || stats_count(step, "max_pass", s.max_pass, why) != 0 ||
        stats_count(step, "min_rt_millis", s.min_rt_millis, why) != 0 ||
        stats_count(step, "max_in_flight", s.max_in_flight, why) != 0) {
      return -1;
    }
    return 0;
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int system_guard_step(void *replay, const cJSON *step, why_t *why) {
  load_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "load") == 0) return load_step(r->load, step, why);
  if (strcmp(op, "acquire") == 0) {
    int64_t count;
    if (int_field(step, "count", &count, why) != 0) return -1;
    rk_decision d;
    rk_system_permit *permit = NULL;
    rk_system_threshold threshold = RK_SYSTEM_THRESHOLD_NONE;
    if (rk_system_guard_try_acquire(r->guard, count, &d, &permit, &threshold) != RK_OK) {
      return fail(why, "acquire: %s", rk_last_error_message());
    }
    if (permit != NULL) handles_push(&r->permits, permit);
    if (d.allowed != (permit != NULL)) return fail(why, "a permit must come with an admission, and only then");
    if (expect_decision(step, &d, why) != 0) return -1;
    /* The threshold that refused, by its name; null when admitted. */
    const cJSON *expected = field(step, "threshold");
    const char *name = rk_system_threshold_name(threshold);
    if (cJSON_IsNull(expected)) {
      if (threshold != RK_SYSTEM_THRESHOLD_NONE) return fail(why, "expected no threshold, got %s", name ? name : "?");
      return 0;
    }
    if (!cJSON_IsString(expected)) return fail(why, "missing field \"threshold\" (a string or null)");
    if (name == NULL || strcmp(name, expected->valuestring) != 0) {
      return fail(why, "expected threshold %s, got %s", expected->valuestring, name ? name : "none");
    }
    return 0;
  }
  if (strcmp(op, "release") == 0) {
    rk_system_permit *permit = take_permit(r, step, why);
    if (permit == NULL) return -1;
    if (rk_system_permit_release(permit) != RK_OK) return fail(why, "release: %s", rk_last_error_message());
    return 0;
  }
  if (strcmp(op, "stats") == 0) {
    rk_system_stats s;
    if (rk_system_guard_stats(r->guard, &s) != RK_OK) return fail(why, "stats: %s", rk_last_error_message());
    if (stats_double(step, "pass_qps", s.pass_qps, why) != 0 ||
        stats_double(step, "block_qps", s.block_qps, why) != 0 ||
        stats_double(step, "success_qps", s.success_qps, why) != 0 ||
        stats_count(step, "in_flight", s.in_flight, why) != 0 ||
        stats_double(step, "avg_rt_millis", s.avg_rt_millis, why) != 0 ||
        stats_count(step, "min_rt_millis", s.min_rt_millis, why) != 0 ||
        stats_double(step, "max_success_qps", s.max_success_qps, why) != 0) {
      return -1;
    }
    return 0;
  }
  return fail(why, "unknown op \"%s\"", op);
}

/* The rule of a `system_guard` limiter object: each threshold it has is
 * set (an integer one read as an integer, so that a negative one reaches
 * the library). */
static int system_rule_value(const cJSON *spec, rk_system_rule *rule, why_t *why) {
  memset(rule, 0, sizeof *rule);
  if ((rule->has_qps = field(spec, "qps") != NULL) && double_field(spec, "qps", &rule->qps, why) != 0) return -1;
  if ((rule->has_max_thread = field(spec, "max_thread") != NULL) &&
      int_field(spec, "max_thread", &rule->max_thread, why) != 0) {
    return -1;
  }
  if ((rule->has_avg_rt_micros = field(spec, "avg_rt_micros") != NULL) &&
      int_field(spec, "avg_rt_micros", &rule->avg_rt_micros, why) != 0) {
    return -1;
  }
  if ((rule->has_highest_system_load = field(spec, "highest_system_load") != NULL) &&
      double_field(spec, "highest_system_load", &rule->highest_system_load, why) != 0) {
    return -1;
  }
  if ((rule->has_highest_cpu_usage = field(spec, "highest_cpu_usage") != NULL) &&
      double_field(spec, "highest_cpu_usage", &rule->highest_cpu_usage, why) != 0) {
    return -1;
  }
  return 0;
}

static int run_load_driven(const char *algorithm, const cJSON *spec, const cJSON *c, why_t *why) {
  load_replay r = {NULL, NULL, NULL, NULL, {0}};
  bool bbr = strcmp(algorithm, "bbr") == 0;
  int result = -1;
  if (rk_manual_clock_new(&r.clock) != RK_OK || rk_manual_load_new(&r.load) != RK_OK) {
    fail(why, "no clock or load signal: %s", rk_last_error_message());
  } else if (bbr) {
    rk_bbr_options o;
    if (int_field(spec, "window_micros", &o.window_micros, why) == 0 &&
        int_field(spec, "buckets", &o.buckets, why) == 0 &&
        double_field(spec, "cpu_threshold", &o.cpu_threshold, why) == 0 &&
        int_field(spec, "cool_down_micros", &o.cool_down_micros, why) == 0) {
      rk_status status = rk_bbr_new(&o, r.load, r.clock, &r.bbr);
      result = replay_steps(c, status, &r, bbr_step, why);
    }
  } else {
    rk_system_rule rule;
    if (system_rule_value(spec, &rule, why) == 0) {
      rk_status status = rk_system_guard_new(&rule, r.load, r.clock, &r.guard);
      result = replay_steps(c, status, &r, system_guard_step, why);
    }
  }
  /* The permits the case did not give back. */
  for (size_t i = 0; i < r.permits.len; i++) {
    if (r.permits.items[i] == NULL) continue;
    rk_status status =
        bbr ? rk_bbr_permit_release(r.permits.items[i]) : rk_system_permit_release(r.permits.items[i]);
    if (status != RK_OK) result = fail(why, "releasing permit #%zu at the end: %s", i, rk_last_error_message());
  }
  free(r.permits.items);
  rk_bbr_free(r.bbr);
  rk_system_guard_free(r.guard);
  rk_load_free(r.load);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Resilience4j's cycle limiter (cycle) ------------------------------ */

typedef struct {
  rk_manual_clock *clock;
  rk_cycle_limiter *limiter;
} cycle_replay;

/* The non-blocking calls make the decisions, so that the clock moves only
 * by sleep steps. */
static int cycle_step(void *replay, const cJSON *step, why_t *why) {
  cycle_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "acquire") == 0 || strcmp(op, "try_acquire") == 0) {
    int64_t permits;
    if (int_field(step, "permits", &permits, why) != 0) return -1;
    rk_decision d;
    rk_status status = strcmp(op, "acquire") == 0 ? rk_cycle_limiter_acquire_permission(r->limiter, permits, &d)
                                                  : rk_cycle_limiter_try_acquire_permission(r->limiter, permits, &d);
    int o = outcome(step, status, why);
    return o != 0 ? (o > 0 ? 0 : -1) : expect_decision(step, &d, why);
  }
  if (strcmp(op, "reserve") == 0) {
    int64_t permits, expected = -1, wait = 0;
    if (int_field(step, "permits", &permits, why) != 0) return -1;
    if (!cJSON_IsNull(field(step, "wait_micros")) && int_field(step, "wait_micros", &expected, why) != 0) return -1;
    int o = outcome(step, rk_cycle_limiter_reserve_permission(r->limiter, permits, &wait), why);
    return o != 0 ? (o > 0 ? 0 : -1) : expect_i64("wait_micros (-1: refused)", expected, wait, why);
  }
  if (strcmp(op, "change_limit") == 0) {
    int64_t limit;
    if (int_field(step, "limit_for_period", &limit, why) != 0) return -1;
    return outcome(step, rk_cycle_limiter_change_limit_for_period(r->limiter, limit), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "change_timeout") == 0) {
    int64_t micros;
    if (int_field(step, "timeout_duration_micros", &micros, why) != 0) return -1;
    return outcome(step, rk_cycle_limiter_change_timeout_duration(r->limiter, micros), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "drain") == 0) {
    int64_t expected;
    uint64_t drained = 0;
    if (int_field(step, "drained", &expected, why) != 0) return -1;
    if (rk_cycle_limiter_drain_permissions(r->limiter, &drained) != RK_OK) {
      return fail(why, "drain: %s", rk_last_error_message());
    }
    return expect_count("drained", expected, drained, why);
  }
  if (strcmp(op, "metrics") == 0) {
    int64_t available, wait, cycle;
    if (int_field(step, "available_permissions", &available, why) != 0 ||
        int_field(step, "micros_to_wait", &wait, why) != 0 || int_field(step, "cycle", &cycle, why) != 0) {
      return -1;
    }
    rk_cycle_metrics m;
    if (rk_cycle_limiter_metrics(r->limiter, &m) != RK_OK) return fail(why, "metrics: %s", rk_last_error_message());
    if (expect_i64("available_permissions", available, m.available_permissions, why) != 0) return -1;
    if (expect_i64("micros_to_wait", wait, m.micros_to_wait, why) != 0) return -1;
    return expect_i64("cycle", cycle, m.cycle, why);
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_cycle(const cJSON *spec, const cJSON *c, why_t *why) {
  cycle_replay r = {NULL, NULL};
  int result = -1;
  rk_cycle_config config;
  if (rk_manual_clock_new(&r.clock) != RK_OK) {
    fail(why, "no clock: %s", rk_last_error_message());
  } else if (int_field(spec, "limit_for_period", &config.limit_for_period, why) == 0 &&
             int_field(spec, "limit_refresh_period_micros", &config.limit_refresh_period_micros, why) == 0 &&
             int_field(spec, "timeout_duration_micros", &config.timeout_duration_micros, why) == 0) {
    rk_status status = rk_cycle_limiter_new(&config, r.clock, &r.limiter);
    result = replay_steps(c, status, &r, cycle_step, why);
  }
  rk_cycle_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Sentinel's flow rule (flow) --------------------------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_flow_controller *flow;
  rk_flow_permit *permits; /* every admitted check's, in order */
  bool *released;          /* whether each was given back */
  size_t len, cap;
} flow_replay;

/* A rule from a limiter's or a `set_rule` step's fields: Sentinel's
 * defaults, then each field given (the strings as the C constants). */
static int flow_rule_value(const cJSON *fields, rk_flow_rule *rule, why_t *why) {
  if (rk_flow_rule_default(rule) != RK_OK) return fail(why, "rk_flow_rule_default: %s", rk_last_error_message());
  if (double_field(fields, "count", &rule->count, why) != 0) return -1;
  const char *name = NULL;
  if (field(fields, "grade") != NULL) {
    if (str_field(fields, "grade", &name, why) != 0) return -1;
    if (strcmp(name, "qps") == 0) {
      rule->grade = RK_FLOW_GRADE_QPS;
    } else if (strcmp(name, "thread") == 0) {
      rule->grade = RK_FLOW_GRADE_THREAD;
    } else {
      return fail(why, "unknown grade \"%s\"", name);
    }
  }
  if (field(fields, "control_behavior") != NULL) {
    if (str_field(fields, "control_behavior", &name, why) != 0) return -1;
    static const char *const behaviors[] = {"default", "warm_up", "rate_limiter", "warm_up_rate_limiter"};
    static const rk_control_behavior values[] = {RK_CONTROL_BEHAVIOR_DEFAULT, RK_CONTROL_BEHAVIOR_WARM_UP,
                                                 RK_CONTROL_BEHAVIOR_RATE_LIMITER,
                                                 RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER};
    size_t i = 0;
    while (i < 4 && strcmp(name, behaviors[i]) != 0) i++;
    if (i == 4) return fail(why, "unknown control_behavior \"%s\"", name);
    rule->control_behavior = values[i];
  }
  if (field(fields, "warm_up_period_sec") != NULL &&
      int_field(fields, "warm_up_period_sec", &rule->warm_up_period_sec, why) != 0) {
    return -1;
  }
  if (field(fields, "cold_factor") != NULL && int_field(fields, "cold_factor", &rule->cold_factor, why) != 0) {
    return -1;
  }
  if (field(fields, "max_queueing_time_ms") != NULL &&
      int_field(fields, "max_queueing_time_ms", &rule->max_queueing_time_ms, why) != 0) {
    return -1;
  }
  return 0;
}

static void flow_keep(flow_replay *r, rk_flow_permit permit) {
  if (r->len == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 16;
    rk_flow_permit *permits = realloc(r->permits, r->cap * sizeof *permits);
    bool *released = realloc(r->released, r->cap * sizeof *released);
    if (permits == NULL || released == NULL) {
      perror("realloc");
      exit(2);
    }
    r->permits = permits;
    r->released = released;
  }
  r->permits[r->len] = permit;
  r->released[r->len++] = false;
}

static int flow_step(void *replay, const cJSON *step, why_t *why) {
  flow_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "check") == 0) {
    int64_t count;
    bool prioritized;
    if (int_field(step, "acquire_count", &count, why) != 0 || bool_field(step, "prioritized", &prioritized, why) != 0) {
      return -1;
    }
    rk_decision d;
    bool admitted = false;
    rk_flow_permit permit;
    int o = outcome(step, rk_flow_controller_check(r->flow, count, prioritized, &d, &admitted, &permit), why);
    if (o != 0) return o < 0 ? -1 : 0;
    if (admitted) flow_keep(r, permit);
    if (d.allowed != admitted) return fail(why, "a permit must come with an admission, and only then");
    return expect_decision(step, &d, why);
  }
  if (strcmp(op, "release") == 0) {
    int64_t index;
    if (int_field(step, "permit", &index, why) != 0) return -1;
    if (index < 0 || (uint64_t)index >= r->len) return fail(why, "no permit #%" PRId64, index);
    if (r->released[index]) return fail(why, "permit #%" PRId64 " was already given back", index);
    r->released[index] = true;
    if (rk_flow_controller_release(r->flow, &r->permits[index]) != RK_OK) {
      return fail(why, "release: %s", rk_last_error_message());
    }
    return 0;
  }
  if (strcmp(op, "add_pass") == 0) {
    int64_t count;
    if (int_field(step, "count", &count, why) != 0) return -1;
    return outcome(step, rk_flow_controller_add_pass(r->flow, count), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "set_rule") == 0) {
    rk_flow_rule rule;
    if (flow_rule_value(step, &rule, why) != 0) return -1;
    return outcome(step, rk_flow_controller_set_rule(r->flow, &rule), why) < 0 ? -1 : 0;
  }
  if (strcmp(op, "stats") == 0) {
    rk_flow_stats s;
    if (rk_flow_controller_stats(r->flow, &s) != RK_OK) return fail(why, "stats: %s", rk_last_error_message());
    if (stats_double(step, "pass_qps", s.pass_qps, why) != 0 ||
        stats_double(step, "block_qps", s.block_qps, why) != 0 ||
        stats_double(step, "success_qps", s.success_qps, why) != 0 ||
        stats_double(step, "previous_pass_qps", s.previous_pass_qps, why) != 0 ||
        stats_count(step, "occupied_pass", s.occupied_pass, why) != 0 ||
        stats_count(step, "waiting", s.waiting, why) != 0 || stats_count(step, "in_flight", s.in_flight, why) != 0 ||
        stats_double(step, "avg_rt_millis", s.avg_rt_millis, why) != 0) {
      return -1;
    }
    return 0;
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_flow(const cJSON *spec, const cJSON *c, why_t *why) {
  flow_replay r = {NULL, NULL, NULL, NULL, 0, 0};
  int result = -1;
  rk_flow_rule rule;
  int64_t sample_count, interval_ms;
  if (rk_manual_clock_new(&r.clock) != RK_OK) {
    fail(why, "no clock: %s", rk_last_error_message());
  } else if (flow_rule_value(spec, &rule, why) == 0 && int_field(spec, "sample_count", &sample_count, why) == 0 &&
             int_field(spec, "interval_ms", &interval_ms, why) == 0) {
    rk_status status = rk_flow_controller_new(&rule, sample_count, interval_ms, r.clock, &r.flow);
    result = replay_steps(c, status, &r, flow_step, why);
  }
  free(r.permits);
  free(r.released);
  rk_flow_controller_free(r.flow);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- The composite ---------------------------------------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_composite_limiter *limiter;
  size_t len;
} composite_replay;

static int composite_step(void *replay, const cJSON *step, why_t *why) {
  const composite_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  int64_t cost;
  rk_decision d;
  if (strcmp(op, "peek") == 0) {
    if (int_field(step, "cost", &cost, why) != 0) return -1;
    int o = outcome(step, rk_composite_limiter_peek(r->limiter, cost, &d), why);
    return o != 0 ? (o > 0 ? 0 : -1) : expect_decision(step, &d, why);
  }
  if (strcmp(op, "check") == 0) {
    if (int_field(step, "cost", &cost, why) != 0) return -1;
    rk_decision *parts = calloc(r->len, sizeof *parts);
    if (parts == NULL) return fail(why, "out of memory");
    int result = -1;
    int o = outcome(step, rk_composite_limiter_check_each(r->limiter, cost, &d, parts, r->len), why);
    if (o != 0) {
      result = o > 0 ? 0 : -1;
    } else if (expect_decision(step, &d, why) == 0) {
      const cJSON *expected = field(step, "parts");
      if (!cJSON_IsArray(expected)) {
        fail(why, "no \"parts\" array");
      } else if ((size_t)cJSON_GetArraySize(expected) != r->len) {
        fail(why, "expected %d parts, got %zu", cJSON_GetArraySize(expected), r->len);
      } else {
        result = 0;
        size_t i = 0;
        const cJSON *e = NULL;
        cJSON_ArrayForEach(e, expected) {
          rk_decision part;
          char label[32];
          snprintf(label, sizeof label, "part %zu: ", i);
          if (decision_value(e, &part, why) != 0 || compare_decision(label, &part, &parts[i], why) != 0) {
            result = -1;
            break;
          }
          i++;
        }
      }
    }
    free(parts);
    return result;
  }
  return fail(why, "unknown op \"%s\"", op);
}

static int run_composite(const cJSON *spec, const cJSON *c, why_t *why) {
  const cJSON *limits = field(spec, "limits");
  if (!cJSON_IsArray(limits)) return fail(why, "no \"limits\" array");
  size_t n = (size_t)cJSON_GetArraySize(limits);
  rk_limiter_spec *specs = calloc(n ? n : 1, sizeof *specs);
  if (specs == NULL) return fail(why, "out of memory");
  composite_replay r = {NULL, NULL, n};
  int result = -1;
  size_t i = 0;
  const cJSON *limit = NULL;
  cJSON_ArrayForEach(limit, limits) {
    if (spec_value(limit, &specs[i], why) != 0) goto done;
    i++;
  }
  if (rk_manual_clock_new(&r.clock) != RK_OK) {
    fail(why, "no clock: %s", rk_last_error_message());
    goto done;
  }
  rk_status status = rk_composite_limiter_new(n ? specs : NULL, n, r.clock, &r.limiter);
  result = replay_steps(c, status, &r, composite_step, why);
done:
  free(specs);
  rk_composite_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

/* ---- Keys and the clock (vectors/bad_inputs.json) --------------------- */

typedef struct {
  rk_manual_clock *clock;
  rk_keyed_limiter *limiter;
} keyed_replay;

static int keyed_step(void *replay, const cJSON *step, why_t *why) {
  const keyed_replay *r = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "sleep") == 0) return sleep_step(r->clock, step, why);
  if (strcmp(op, "check") != 0) return fail(why, "unknown op \"%s\"", op);
  int64_t cost, length = 0;
  if (int_field(step, "cost", &cost, why) != 0) return -1;
  char *owned = NULL;
  const char *key = NULL;
  if (field(step, "key_length") != NULL) {
    if (int_field(step, "key_length", &length, why) != 0) return -1;
    if (length < 0 || (owned = malloc((size_t)length + 1)) == NULL) return fail(why, "no key of %" PRId64 " bytes", length);
    memset(owned, 'k', (size_t)length);
    key = owned;
  } else if (field(step, "key_utf16") != NULL) {
    return fail(why, "a key of UTF-16 code units: C's keys are bytes (the case must skip c)");
  } else {
    if (str_field(step, "key", &key, why) != 0) return -1;
    length = (int64_t)strlen(key);
  }
  rk_decision d;
  int o = outcome(step, rk_keyed_limiter_check(r->limiter, key, (size_t)length, cost, &d, NULL), why);
  free(owned);
  return o != 0 ? (o > 0 ? 0 : -1) : expect_decision(step, &d, why);
}

static int run_keyed(const cJSON *spec, const cJSON *c, why_t *why) {
  keyed_replay r = {NULL, NULL};
  rk_limiter_spec template;
  rk_keyed_options options = {0};
  if (spec_value(field(spec, "template"), &template, why) != 0) return -1;
  if (int_field(spec, "max_keys", &options.max_keys, why) != 0) return -1;
  if (field(spec, "shards") != NULL && int_field(spec, "shards", &options.shards, why) != 0) return -1;
  if (field(spec, "max_key_bytes") != NULL && int_field(spec, "max_key_bytes", &options.max_key_bytes, why) != 0) {
    return -1;
  }
  if (rk_manual_clock_new(&r.clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  rk_status status = rk_keyed_limiter_new(&template, &options, r.clock, &r.limiter);
  int result = replay_steps(c, status, &r, keyed_step, why);
  rk_keyed_limiter_free(r.limiter);
  rk_manual_clock_free(r.clock);
  return result;
}

static int clock_step(void *replay, const cJSON *step, why_t *why) {
  const rk_manual_clock *clock = replay;
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;
  if (strcmp(op, "advance") != 0) return fail(why, "unknown op \"%s\"", op);
  if (field(step, "micros") == NULL) return fail(why, "C's clock moves by microseconds (the case must skip c)");
  int64_t micros;
  if (int_field(step, "micros", &micros, why) != 0) return -1;
  return outcome(step, rk_manual_clock_advance_micros(clock, micros), why) < 0 ? -1 : 0;
}

static int run_clock(const cJSON *c, why_t *why) {
  rk_manual_clock *clock = NULL;
  if (rk_manual_clock_new(&clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());
  int result = replay_steps(c, RK_OK, clock, clock_step, why);
  rk_manual_clock_free(clock);
  return result;
}

/* ---- Dispatch --------------------------------------------------------- */

/* One case. Returns 0 when every step gave the expected result. */
static int run_case(const cJSON *c, why_t *why) {
  const cJSON *spec = field(c, "limiter");
  if (!cJSON_IsObject(spec)) return fail(why, "case has no \"limiter\"");
  const char *algorithm = NULL;
  if (str_field(spec, "algorithm", &algorithm, why) != 0) return -1;
  static const char *const admission[] = {"token_bucket",     "gcra",           "leaky_bucket_meter",
                                          "leaky_bucket_queue", "fixed_window", "sliding_window",
                                          "sliding_log",      "sliding_window_counter"};
  for (size_t i = 0; i < sizeof admission / sizeof admission[0]; i++) {
    if (strcmp(algorithm, admission[i]) == 0) return run_limiter(algorithm, spec, c, why);
  }
  if (strcmp(algorithm, "smooth_bursty") == 0 || strcmp(algorithm, "smooth_warming_up") == 0) {
    return run_smooth(algorithm, spec, c, why);
  }
  if (strcmp(algorithm, "srtcm") == 0 || strcmp(algorithm, "trtcm") == 0) return run_marker(algorithm, spec, c, why);
  if (strcmp(algorithm, "gradient") == 0 || strcmp(algorithm, "aimd") == 0 || strcmp(algorithm, "concurrency") == 0) {
    return run_concurrency(algorithm, spec, c, why);
  }
  if (strcmp(algorithm, "bbr") == 0 || strcmp(algorithm, "system_guard") == 0) {
    return run_load_driven(algorithm, spec, c, why);
  }
  if (strcmp(algorithm, "flow") == 0) return run_flow(spec, c, why);
  if (strcmp(algorithm, "cycle") == 0) return run_cycle(spec, c, why);
  if (strcmp(algorithm, "composite") == 0) return run_composite(spec, c, why);
  if (strcmp(algorithm, "keyed") == 0) return run_keyed(spec, c, why);
  if (strcmp(algorithm, "manual_clock") == 0) return run_clock(c, why);
  return fail(why, "unsupported algorithm \"%s\"", algorithm);
}

/* ---- Files ------------------------------------------------------------ */

typedef struct {
  char **paths;
  size_t len, cap;
} file_list;

static void push(file_list *files, const char *path) {
  if (files->len == files->cap) {
    files->cap = files->cap ? files->cap * 2 : 16;
    char **grown = realloc(files->paths, files->cap * sizeof *grown);
    if (grown == NULL) {
      perror("realloc");
      exit(2);
    }
    files->paths = grown;
  }
  size_t n = strlen(path) + 1;
  char *copy = malloc(n);
  if (copy == NULL) {
    perror("malloc");
    exit(2);
  }
  memcpy(copy, path, n);
  files->paths[files->len++] = copy;
}

static int compare_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Adds `path` (a file) or every *.json below it (a directory, sorted). */
static int collect(const char *path, file_list *files) {
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "error: %s: no such file or directory\n", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    push(files, path);
    return 0;
  }
  DIR *dir = opendir(path);
  if (dir == NULL) {
    fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
    return -1;
  }
  file_list entries = {0};
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    size_t n = strlen(path) + strlen(entry->d_name) + 2;
    char *full = malloc(n);
    if (full == NULL) {
      perror("malloc");
      exit(2);
    }
    snprintf(full, n, "%s/%s", path, entry->d_name);
    push(&entries, full);
    free(full);
  }
  closedir(dir);
  if (entries.len > 0) qsort(entries.paths, entries.len, sizeof *entries.paths, compare_names);
  int result = 0;
  for (size_t i = 0; i < entries.len; i++) {
    struct stat sub;
    if (stat(entries.paths[i], &sub) == 0 && S_ISDIR(sub.st_mode)) {
      if (collect(entries.paths[i], files) != 0) result = -1;
    } else if (ends_with(entries.paths[i], ".json")) {
      push(files, entries.paths[i]);
    }
    free(entries.paths[i]);
  }
  free(entries.paths);
  return result;
}

/* The whole file, NUL-terminated; NULL on error. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf != NULL) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    cap *= 2;
    char *grown = realloc(buf, cap);
    if (grown == NULL) free(buf);
    buf = grown;
  }
  bool bad = buf == NULL || ferror(f);
  fclose(f);
  if (bad) {
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

/* Runs every case of one file; returns -1 when the file cannot be used. */
static int run_file(const char *path, unsigned long long *passed, unsigned long long *failed,
                    unsigned long long *skipped) {
  size_t len = 0;
  char *text = read_file(path, &len);
  if (text == NULL) {
    fprintf(stderr, "error: %s: %s\n", path, strerror(errno));
    return -1;
  }
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  if (doc == NULL) {
    fprintf(stderr, "error: %s: not JSON\n", path);
    return -1;
  }
  int result = 0;
  const cJSON *format = field(doc, "format");
  const cJSON *cases = field(doc, "cases");
  if (!cJSON_IsString(format) || strcmp(format->valuestring, FORMAT) != 0) {
    fprintf(stderr, "error: %s: format is not \"%s\"\n", path, FORMAT);
    result = -1;
  } else if (!cJSON_IsArray(cases)) {
    fprintf(stderr, "error: %s: no \"cases\" array\n", path);
    result = -1;
  } else {
    int i = 0;
    const cJSON *c = NULL;
    cJSON_ArrayForEach(c, cases) {
      why_t why;
      if (field(field(c, "skip"), LANGUAGE) != NULL) {
        (*skipped)++;
      } else if (run_case(c, &why) == 0) {
        (*passed)++;
      } else {
        (*failed)++;
        const cJSON *name = field(c, "name");
        if (cJSON_IsString(name)) {
          printf("FAIL %s: %s: %s\n", path, name->valuestring, why.text);
        } else {
          printf("FAIL %s: case #%d: %s\n", path, i, why.text);
        }
      }
      i++;
    }
  }
  cJSON_Delete(doc);
  return result;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: rk-conformance PATH...\n");
    return 2;
  }
  file_list files = {0};
  bool unreadable = false;
  for (int i = 1; i < argc; i++) {
    if (collect(argv[i], &files) != 0) unreadable = true;
  }
  unsigned long long passed = 0, failed = 0, skipped = 0;
  if (!unreadable) {
    for (size_t i = 0; i < files.len; i++) {
      if (run_file(files.paths[i], &passed, &failed, &skipped) != 0) unreadable = true;
    }
  }
  for (size_t i = 0; i < files.len; i++) free(files.paths[i]);
  free(files.paths);
  if (!unreadable || passed + failed > 0) {
    printf("%llu passed, %llu failed", passed, failed);
    if (skipped > 0) printf(", %llu skipped", skipped);
    printf("\n");
  }
  return unreadable ? 2 : failed > 0 ? 1 : 0;
}
