/*
 * The C runner of the cross-language conformance suite.
 *
 *   rk-conformance PATH...     (normally: tests/conformance/run c [PATH...])
 *
 * Reads vector files in the ratelimit-conformance/1 format
 * (tests/conformance/FORMAT.md), or directories of them (every *.json
 * below, sorted), and replays every case through the C API on a manual
 * clock, as the Rust runner (tests/conformance/rust) does through the Rust
 * API: the clock moves only by `sleep` steps and by the waits of successful
 * acquires. Prints one line per failing case, naming the first step that
 * differed with the expected and actual values, and a last line
 * "N passed, N failed". Exits 1 when a case failed, 2 on unreadable input.
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
    if (strcmp(k, "wait_micros") == 0 || strcmp(k, "acquired") == 0 || strcmp(k, "error") == 0) continue;
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

/* ---- Replaying a case ------------------------------------------------- */

/* One step. Returns 0 when it gave the expected result. */
static int run_step(const rk_rate_limiter *limiter, const rk_manual_clock *clock, const cJSON *step, why_t *why) {
  const cJSON *error_field = field(step, "error");
  const char *expects_error = NULL;
  if (error_field != NULL) expects_error = cJSON_IsString(error_field) ? error_field->valuestring : "?";
  const char *op = NULL;
  if (str_field(step, "op", &op, why) != 0) return -1;

  rk_status status;
  char actual[128] = "";   /* the result, when the call succeeded but differed */
  if (strcmp(op, "sleep") == 0) {
    int64_t micros;
    if (int_field(step, "micros", &micros, why) != 0) return -1;
    status = rk_manual_clock_advance_micros(clock, micros);
    if (status != RK_OK) return fail(why, "advancing the clock failed: %s", rk_last_error_message());
    return 0;
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
    if (same_double(rate, expected)) return 0;
    char e[40], a[40];
    show_double(expected, e, sizeof e);
    show_double(rate, a, sizeof a);
    return fail(why, "expected permits_per_second %s, got %s", e, a);
  } else {
    return fail(why, "unknown op \"%s\"", op);
  }

  char expected[128];
  expected_value(step, expected, sizeof expected);
  if (expects_error != NULL) {
    if (status == RK_INVALID_ARGUMENT && strcmp(expects_error, "invalid_argument") == 0) return 0;
    if (status != RK_OK) return fail(why, "expected error %s, got error: %s", expects_error, rk_last_error_message());
    return fail(why, "expected error %s, got %s", expects_error, actual);
  }
  if (status != RK_OK) return fail(why, "expected %s, got error: %s", expected, rk_last_error_message());
  return fail(why, "expected %s, got %s", expected, actual);
}

/* Creates the case's limiter on `clock`. */
static int create(const cJSON *spec, const rk_manual_clock *clock, rk_rate_limiter **limiter, rk_status *status,
                  why_t *why) {
  const char *algorithm = NULL;
  double rate;
  if (str_field(spec, "algorithm", &algorithm, why) != 0) return -1;
  if (strcmp(algorithm, "smooth_bursty") == 0) {
    double burst;
    if (double_field(spec, "permits_per_second", &rate, why) != 0) return -1;
    if (double_field(spec, "max_burst_seconds", &burst, why) != 0) return -1;
    *status = rk_rate_limiter_new_bursty(rate, burst, clock, limiter);
    return 0;
  }
  if (strcmp(algorithm, "smooth_warming_up") == 0) {
    int64_t warmup;
    double cold_factor;
    if (double_field(spec, "permits_per_second", &rate, why) != 0) return -1;
    if (int_field(spec, "warmup_micros", &warmup, why) != 0) return -1;
    if (double_field(spec, "cold_factor", &cold_factor, why) != 0) return -1;
    *status = rk_rate_limiter_new_warming_up(rate, warmup, cold_factor, clock, limiter);
    return 0;
  }
  return fail(why, "unsupported algorithm \"%s\"", algorithm);
}

/* One case. Returns 0 when every step gave the expected result. */
static int run_case(const cJSON *c, why_t *why) {
  const cJSON *spec = field(c, "limiter");
  if (!cJSON_IsObject(spec)) return fail(why, "case has no \"limiter\"");
  rk_manual_clock *clock = NULL;
  if (rk_manual_clock_new(&clock) != RK_OK) return fail(why, "no clock: %s", rk_last_error_message());

  int result = 0;
  rk_rate_limiter *limiter = NULL;
  rk_status status = RK_OK;
  const cJSON *create_error = field(c, "create_error");
  if (create(spec, clock, &limiter, &status, why) != 0) {
    result = -1;
  } else if (create_error != NULL) {
    char expected[64];
    show_json(create_error, expected, sizeof expected);
    if (status == RK_INVALID_ARGUMENT && cJSON_IsString(create_error) &&
        strcmp(create_error->valuestring, "invalid_argument") == 0) {
      result = 0;
    } else if (status != RK_OK) {
      result = fail(why, "create: expected error %s, got error %s", expected, rk_last_error_message());
    } else {
      result = fail(why, "create: expected error %s, got a limiter", expected);
    }
  } else if (status != RK_OK) {
    result = fail(why, "create: expected a limiter, got error: %s", rk_last_error_message());
  } else {
    const cJSON *steps = field(c, "steps");
    if (!cJSON_IsArray(steps)) {
      result = fail(why, "case has no \"steps\"");
    } else {
      int i = 0;
      const cJSON *step = NULL;
      cJSON_ArrayForEach(step, steps) {
        why_t step_why;
        if (run_step(limiter, clock, step, &step_why) != 0) {
          char description[256];
          describe(step, description, sizeof description);
          result = fail(why, "step %d %s: %s", i, description, step_why.text);
          break;
        }
        i++;
      }
    }
  }
  rk_rate_limiter_free(limiter);
  rk_manual_clock_free(clock);
  return result;
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
static int run_file(const char *path, unsigned long long *passed, unsigned long long *failed) {
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
      if (run_case(c, &why) == 0) {
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
  unsigned long long passed = 0, failed = 0;
  if (!unreadable) {
    for (size_t i = 0; i < files.len; i++) {
      if (run_file(files.paths[i], &passed, &failed) != 0) unreadable = true;
    }
  }
  for (size_t i = 0; i < files.len; i++) free(files.paths[i]);
  free(files.paths);
  if (!unreadable || passed + failed > 0) printf("%llu passed, %llu failed\n", passed, failed);
  return unreadable ? 2 : failed > 0 ? 1 : 0;
}
