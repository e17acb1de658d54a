/*
 * The load-driven limiters: load signals (manual, and a sampler of this
 * process), Kratos' BBR and Sentinel's system rule, on a manual clock and a
 * manual signal; their permits, statistics and errors.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>

#include "check.h"

/* A call that must fail with `status`, naming `argument` (or, with NULL,
 * naming none). */
#define CHECK_FAILS(call, status, argument)            \
  do {                                                 \
    CHECK_STATUS(call, status);                        \
    CHECK_STR(rk_last_error_argument(), (argument));   \
  } while (0)

static rk_bbr_permit *bbr_acquire(const rk_bbr *bbr, rk_decision *d) {
  rk_bbr_permit *permit = (rk_bbr_permit *)&permit; /* must be overwritten */
  CHECK_OK(rk_bbr_try_acquire(bbr, d, &permit));
  return permit;
}

static rk_bbr_stat bbr_stats(const rk_bbr *bbr) {
  rk_bbr_stat s;
  memset(&s, 0xAB, sizeof s);
  CHECK_OK(rk_bbr_stats(bbr, &s));
  return s;
}

static void load_signals(void) {
  rk_load *load = NULL;
  CHECK_OK(rk_manual_load_new(&load));
  if (load == NULL) return;
  double cpu = 0, average = 0;
  CHECK_OK(rk_load_read(load, &cpu, &average));
  CHECK(isnan(cpu) && isnan(average)); /* unknown at first */
  CHECK_OK(rk_manual_load_set_cpu_usage(load, 0.25));
  CHECK_OK(rk_manual_load_set_load_average(load, 3.5));
  CHECK_OK(rk_load_read(load, &cpu, &average));
  CHECK_DOUBLE(cpu, 0.25);
  CHECK_DOUBLE(average, 3.5);
  /* Bad values are refused, naming them, and change nothing. */
  CHECK_FAILS(rk_manual_load_set_cpu_usage(load, 1.5), RK_INVALID_ARGUMENT, "cpu_usage");
  CHECK_FAILS(rk_manual_load_set_cpu_usage(load, NAN), RK_INVALID_ARGUMENT, "cpu_usage");
  CHECK_FAILS(rk_manual_load_set_load_average(load, -1.0), RK_INVALID_ARGUMENT, "load_average");
  CHECK_FAILS(rk_manual_load_set_load_average(load, INFINITY), RK_INVALID_ARGUMENT, "load_average");
  CHECK_OK(rk_load_read(load, &cpu, &average));
  CHECK_DOUBLE(cpu, 0.25);
  CHECK_DOUBLE(average, 3.5);
  CHECK_OK(rk_manual_load_clear(load));
  CHECK_OK(rk_load_read(load, &cpu, &average));
  CHECK(isnan(cpu) && isnan(average));

  /* A sampler of this process: its readings are fractions when known. A
   * sampler cannot be set. */
  rk_load *sampler = NULL;
  CHECK_FAILS(rk_system_load_new(999, 0.5, &sampler), RK_INVALID_ARGUMENT, "interval_micros");
  CHECK_FAILS(rk_system_load_new(-1, 0.5, &sampler), RK_INVALID_ARGUMENT, "interval_micros");
  CHECK_FAILS(rk_system_load_new(10000, 1.0, &sampler), RK_INVALID_ARGUMENT, "decay");
  CHECK(sampler == NULL);
  CHECK_OK(rk_system_load_new(10000, 0.5, &sampler));
  if (sampler != NULL) {
    CHECK_OK(rk_load_read(sampler, &cpu, &average));
    CHECK(isnan(cpu) || (cpu >= 0.0 && cpu <= 1.0));
    CHECK(isnan(average) || average >= 0.0);
    CHECK_FAILS(rk_manual_load_set_cpu_usage(sampler, 0.5), RK_INVALID_ARGUMENT, "load");
    CHECK_FAILS(rk_manual_load_set_load_average(sampler, 0.5), RK_INVALID_ARGUMENT, "load");
    CHECK_FAILS(rk_manual_load_clear(sampler), RK_INVALID_ARGUMENT, "load");
    rk_load_free(sampler); /* stops its thread: valgrind sees nothing left */
  }

  /* NULL handles and out-pointers are statuses. */
  CHECK_FAILS(rk_manual_load_new(NULL), RK_NULL_POINTER, "out_load");
  CHECK_FAILS(rk_system_load_new(10000, 0.5, NULL), RK_NULL_POINTER, "out_load");
  CHECK_FAILS(rk_system_load_shared(NULL), RK_NULL_POINTER, "out_load");
  CHECK_FAILS(rk_load_read(NULL, &cpu, &average), RK_NULL_POINTER, "load");
  CHECK_FAILS(rk_load_read(load, NULL, &average), RK_NULL_POINTER, "out_cpu_usage");
  CHECK_FAILS(rk_load_read(load, &cpu, NULL), RK_NULL_POINTER, "out_load_average");
  CHECK_FAILS(rk_manual_load_set_cpu_usage(NULL, 0.5), RK_NULL_POINTER, "load");
  CHECK_FAILS(rk_manual_load_set_load_average(NULL, 0.5), RK_NULL_POINTER, "load");
  CHECK_FAILS(rk_manual_load_clear(NULL), RK_NULL_POINTER, "load");
  rk_load_free(load);
  rk_load_free(NULL);
}

/* BBR sheds only while the CPU is at or above its threshold, and during
 * the cool-down after shedding began; never while the CPU is low, however
 * many requests are in flight. */
static void bbr_sheds_only_when_overloaded(void) {
  rk_manual_clock *clock = NULL;
  rk_load *load = NULL;
  rk_bbr *bbr = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_manual_load_new(&load));
  rk_bbr_options options;
  CHECK_OK(rk_bbr_options_default(&options));
  /* Kratos' defaults. */
  CHECK_I64(options.window_micros, 10000000);
  CHECK_I64(options.buckets, 100);
  CHECK_DOUBLE(options.cpu_threshold, 0.8);
  CHECK_I64(options.cool_down_micros, 1000000);
  options.window_micros = 1000000;
  options.buckets = 10;
  CHECK_OK(rk_bbr_new(&options, load, clock, &bbr));
  if (clock == NULL || load == NULL || bbr == NULL) return;
  /* The limiter keeps its signal: the caller's handle may go. */
  rk_load *mover = load;

  /* Ten requests of 10 ms in a row: nine end in the first 100 ms bucket,
   * so BBR's capacity is 9 × 10 ms × 10 buckets/s / 1000 = 0.9, i.e. 0. */
  rk_decision d;
  for (int i = 0; i < 10; i++) {
    rk_bbr_permit *p = bbr_acquire(bbr, &d);
    CHECK(p != NULL && d.allowed);
    CHECK_OK(rk_manual_clock_advance_micros(clock, 10000));
    CHECK_OK(rk_bbr_permit_release(p));
  }
  CHECK_OK(rk_manual_clock_advance_micros(clock, 100000));

  /* CPU unknown (read as 0.0): five in flight over a capacity of 0, all
   * admitted. */
  rk_bbr_permit *held[5];
  for (int i = 0; i < 5; i++) {
    held[i] = bbr_acquire(bbr, &d);
    CHECK(held[i] != NULL);
    CHECK(d.allowed);
  }
  rk_bbr_stat s = bbr_stats(bbr);
  CHECK_DOUBLE(s.cpu_usage, 0.0);
  CHECK_I64(s.in_flight, 5);
  CHECK_I64(s.max_pass, 9);
  CHECK_I64(s.min_rt_millis, 10);
  CHECK_I64(s.max_in_flight, 0);

  /* Just below the threshold: still admitted. */
  CHECK_OK(rk_manual_load_set_cpu_usage(mover, 0.79));
  rk_bbr_permit *below = bbr_acquire(bbr, &d);
  CHECK(below != NULL);
  if (below != NULL) CHECK_OK(rk_bbr_permit_release(below));

  /* At the threshold: shed, with no permit and the capacity as limit. */
  CHECK_OK(rk_manual_load_set_cpu_usage(mover, 0.8));
  rk_bbr_permit *shed = bbr_acquire(bbr, &d);
  CHECK(shed == NULL);
  CHECK_DECISION(d, false, 0, 0, 0, 0, 0, 0);
  s = bbr_stats(bbr);
  CHECK_DOUBLE(s.cpu_usage, 0.8);
  CHECK_I64(s.in_flight, 5);

  /* The CPU is low again, but within the cool-down: still shedding. */
  CHECK_OK(rk_manual_load_set_cpu_usage(mover, 0.1));
  CHECK_OK(rk_manual_clock_advance_micros(clock, 999000));
  shed = bbr_acquire(bbr, NULL);
  CHECK(shed == NULL);
  /* After it: admitted again. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 2000));
  rk_bbr_permit *after = bbr_acquire(bbr, &d);
  CHECK(after != NULL && d.allowed);

  /* Permits outlive the limiter's handle and the signal's. */
  rk_load_free(load);
  rk_bbr_free(bbr);
  for (int i = 0; i < 5; i++)
    if (held[i] != NULL) CHECK_OK(rk_bbr_permit_release(held[i]));
  if (after != NULL) CHECK_OK(rk_bbr_permit_release(after));
  rk_manual_clock_free(clock);
  rk_bbr_free(NULL);
}

static void bbr_errors(void) {
  rk_load *load = NULL;
  CHECK_OK(rk_manual_load_new(&load));
  rk_bbr_options base;
  CHECK_OK(rk_bbr_options_default(&base));
  rk_bbr *bbr = (rk_bbr *)&bbr; /* must stay as it is on failure */
  rk_bbr *const untouched = bbr;
  rk_bbr_options o;
#define BAD_OPTION(field, value, argument)                                  \
  do {                                                                      \
    o = base;                                                               \
    o.field = (value);                                                      \
    CHECK_FAILS(rk_bbr_new(&o, load, NULL, &bbr), RK_INVALID_ARGUMENT, argument); \
    CHECK(bbr == untouched);                                                \
  } while (0)
  BAD_OPTION(window_micros, 0, "window_micros");
  BAD_OPTION(window_micros, -5, "window_micros");
  BAD_OPTION(buckets, 0, "buckets");
  BAD_OPTION(buckets, 129, "buckets");
  BAD_OPTION(buckets, -1, "buckets");
  BAD_OPTION(buckets, 4294967297LL, "buckets"); /* 2^32 + 1: not cut to 1 */
  BAD_OPTION(cpu_threshold, 1.01, "cpu_threshold");
  BAD_OPTION(cpu_threshold, -0.1, "cpu_threshold");
  BAD_OPTION(cpu_threshold, NAN, "cpu_threshold");
  BAD_OPTION(cool_down_micros, -1, "cool_down_micros");
#undef BAD_OPTION
  o = base;
  o.window_micros = 50;
  o.buckets = 100; /* more buckets than microseconds */
  CHECK_FAILS(rk_bbr_new(&o, load, NULL, &bbr), RK_INVALID_ARGUMENT, "buckets");

  CHECK_FAILS(rk_bbr_new(NULL, load, NULL, &bbr), RK_NULL_POINTER, "options");
  CHECK_FAILS(rk_bbr_new(&base, load, NULL, NULL), RK_NULL_POINTER, "out_bbr");
  CHECK_FAILS(rk_bbr_options_default(NULL), RK_NULL_POINTER, "out_options");
  CHECK(bbr == untouched);

  CHECK_OK(rk_bbr_new(&base, load, NULL, &bbr));
  rk_bbr_permit *p = NULL;
  rk_bbr_stat s;
  CHECK_FAILS(rk_bbr_try_acquire(NULL, NULL, &p), RK_NULL_POINTER, "bbr");
  CHECK_FAILS(rk_bbr_try_acquire(bbr, NULL, NULL), RK_NULL_POINTER, "out_permit");
  CHECK_OK(rk_bbr_stats(bbr, &s));
  CHECK_I64(s.in_flight, 0); /* a failed acquire took nothing */
  CHECK_FAILS(rk_bbr_stats(NULL, &s), RK_NULL_POINTER, "bbr");
  CHECK_FAILS(rk_bbr_stats(bbr, NULL), RK_NULL_POINTER, "out_stats");
  CHECK_FAILS(rk_bbr_permit_release(NULL), RK_NULL_POINTER, "permit");
  rk_bbr_free(bbr);
  rk_load_free(load);
}

static rk_system_permit *guard_acquire(const rk_system_guard *guard, int64_t count, rk_system_threshold *threshold) {
  rk_system_permit *permit = (rk_system_permit *)&permit;
  *threshold = 99;
  CHECK_OK(rk_system_guard_try_acquire(guard, count, NULL, &permit, threshold));
  return permit;
}

/* Every threshold refuses in its turn, and is named. */
static void system_guard_names_each_threshold(void) {
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_QPS), "qps");
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_THREAD), "thread");
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_RT), "rt");
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_LOAD), "load");
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_CPU), "cpu");
  CHECK_STR(rk_system_threshold_name(RK_SYSTEM_THRESHOLD_NONE), NULL);
  CHECK_STR(rk_system_threshold_name(6), NULL);

  rk_manual_clock *clock = NULL;
  rk_load *load = NULL;
  rk_system_guard *guard = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_manual_load_new(&load));
  rk_system_rule none;
  memset(&none, 0, sizeof none);
  CHECK_OK(rk_system_guard_new(&none, load, clock, &guard));
  if (clock == NULL || load == NULL || guard == NULL) return;
  rk_system_threshold t;
  rk_system_permit *p;

  /* No threshold: everything is admitted. */
  p = guard_acquire(guard, 1000, &t);
  CHECK(p != NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_NONE);
  if (p != NULL) CHECK_OK(rk_system_permit_release(p));

  /* qps: 1000 passed this second, and 1 more is over 1000. */
  rk_system_rule rule = none;
  rule.has_qps = true;
  rule.qps = 1000;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  rk_decision d;
  p = (rk_system_permit *)&p;
  CHECK_OK(rk_system_guard_try_acquire(guard, 1, &d, &p, &t));
  CHECK(p == NULL);
  CHECK(!d.allowed);
  CHECK_I64(d.limit, 1000);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_QPS);
  CHECK_STR(rk_system_threshold_name(t), "qps");

  /* A second later the counts have rolled off. thread: one in flight is
   * not above 1 (Sentinel admits max_thread + 1). */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  rule = none;
  rule.has_max_thread = true;
  rule.max_thread = 1;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  rk_system_permit *a = guard_acquire(guard, 1, &t);
  rk_system_permit *b = guard_acquire(guard, 1, &t);
  CHECK(a != NULL && b != NULL);
  p = guard_acquire(guard, 1, &t);
  CHECK(p == NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_THREAD);
  rk_system_stats s;
  CHECK_OK(rk_system_guard_stats(guard, &s));
  CHECK_I64(s.in_flight, 2);
  CHECK_DOUBLE(s.pass_qps, 2.0);
  CHECK_DOUBLE(s.block_qps, 1.0);
  /* Both end after 30 ms. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 30000));
  if (a != NULL) CHECK_OK(rk_system_permit_release(a));
  if (b != NULL) CHECK_OK(rk_system_permit_release(b));
  CHECK_OK(rk_system_guard_stats(guard, &s));
  CHECK_I64(s.in_flight, 0);
  CHECK_DOUBLE(s.success_qps, 2.0);
  CHECK_DOUBLE(s.avg_rt_millis, 30.0);
  CHECK_I64(s.min_rt_millis, 30);

  /* rt: the last second's average, 30 ms, is above 20 ms. */
  rule = none;
  rule.has_avg_rt_micros = true;
  rule.avg_rt_micros = 20000;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  p = guard_acquire(guard, 1, &t);
  CHECK(p == NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_RT);
  rule.avg_rt_micros = 30000; /* not above */
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  p = guard_acquire(guard, 1, &t);
  CHECK(p != NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_NONE);
  rk_system_permit *c = p;

  /* cpu: above 0.5 refuses; at it does not. */
  rule = none;
  rule.has_highest_cpu_usage = true;
  rule.highest_cpu_usage = 0.5;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  CHECK_OK(rk_manual_load_set_cpu_usage(load, 0.5));
  p = guard_acquire(guard, 1, &t);
  CHECK(p != NULL);
  if (p != NULL) CHECK_OK(rk_system_permit_release(p));
  CHECK_OK(rk_manual_load_set_cpu_usage(load, 0.51));
  p = guard_acquire(guard, 1, &t);
  CHECK(p == NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_CPU);

  /* load: above its threshold, and BBR's check fails too (with one more
   * in flight than the service's max success QPS × min RT / 1000). */
  rule = none;
  rule.has_highest_system_load = true;
  rule.highest_system_load = 2.0;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  CHECK_OK(rk_manual_load_set_load_average(load, 4.0));
  rk_system_permit *e = guard_acquire(guard, 1, &t); /* c and e in flight */
  CHECK(e != NULL);
  p = guard_acquire(guard, 1, &t);
  CHECK(p == NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_LOAD);
  CHECK_OK(rk_manual_load_set_load_average(load, 2.0)); /* not above */
  p = guard_acquire(guard, 1, &t);
  CHECK(p != NULL);
  if (p != NULL) CHECK_OK(rk_system_permit_release(p));

  /* The rule reads back as set. */
  rk_system_rule back;
  memset(&back, 0xFF, sizeof back);
  CHECK_OK(rk_system_guard_rule(guard, &back));
  CHECK(!back.has_qps && !back.has_max_thread && !back.has_avg_rt_micros && !back.has_highest_cpu_usage);
  CHECK(back.has_highest_system_load);
  CHECK_DOUBLE(back.highest_system_load, 2.0);

  /* The thresholds' order is Sentinel's: qps before cpu. */
  rule.has_qps = true;
  rule.qps = 0;
  rule.has_highest_cpu_usage = true;
  rule.highest_cpu_usage = 0.1;
  CHECK_OK(rk_system_guard_set_rule(guard, &rule));
  p = guard_acquire(guard, 1, &t);
  CHECK(p == NULL);
  CHECK_I64(t, RK_SYSTEM_THRESHOLD_QPS);

  rk_system_guard_free(guard);
  if (c != NULL) CHECK_OK(rk_system_permit_release(c));
  if (e != NULL) CHECK_OK(rk_system_permit_release(e));
  rk_load_free(load);
  rk_manual_clock_free(clock);
  rk_system_guard_free(NULL);
}

static void system_guard_errors(void) {
  rk_load *load = NULL;
  CHECK_OK(rk_manual_load_new(&load));
  rk_system_rule none;
  memset(&none, 0, sizeof none);
  rk_system_guard *guard = (rk_system_guard *)&guard;
  rk_system_guard *const untouched = guard;
  rk_system_rule r;
#define BAD_RULE(field, value, argument)                                               \
  do {                                                                                 \
    r = none;                                                                          \
    r.has_##field = true;                                                              \
    r.field = (value);                                                                 \
    CHECK_FAILS(rk_system_guard_new(&r, load, NULL, &guard), RK_INVALID_ARGUMENT, argument); \
    CHECK(guard == untouched);                                                         \
  } while (0)
  BAD_RULE(qps, -1.0, "qps");
  BAD_RULE(qps, NAN, "qps");
  BAD_RULE(qps, INFINITY, "qps");
  BAD_RULE(max_thread, -1, "max_thread");
  BAD_RULE(avg_rt_micros, -1, "avg_rt_micros");
  BAD_RULE(highest_system_load, -0.5, "highest_system_load");
  BAD_RULE(highest_system_load, NAN, "highest_system_load");
  BAD_RULE(highest_cpu_usage, 1.5, "highest_cpu_usage");
  BAD_RULE(highest_cpu_usage, -0.01, "highest_cpu_usage");
#undef BAD_RULE
  /* An unset threshold's value is not read. */
  r = none;
  r.qps = -1.0;
  r.highest_cpu_usage = 7.0;
  CHECK_OK(rk_system_guard_new(&r, load, NULL, &guard));
  CHECK(guard != untouched);
  CHECK_FAILS(rk_system_guard_new(NULL, load, NULL, &guard), RK_NULL_POINTER, "rule");
  CHECK_FAILS(rk_system_guard_new(&none, load, NULL, NULL), RK_NULL_POINTER, "out_guard");

  /* set_rule refuses a bad rule and keeps the old one. */
  rk_system_rule good = none;
  good.has_max_thread = true;
  good.max_thread = 7;
  CHECK_OK(rk_system_guard_set_rule(guard, &good));
  r = none;
  r.has_highest_cpu_usage = true;
  r.highest_cpu_usage = 2.0;
  CHECK_FAILS(rk_system_guard_set_rule(guard, &r), RK_INVALID_ARGUMENT, "highest_cpu_usage");
  r = none;
  r.has_avg_rt_micros = true;
  r.avg_rt_micros = -3;
  CHECK_FAILS(rk_system_guard_set_rule(guard, &r), RK_INVALID_ARGUMENT, "avg_rt_micros");
  rk_system_rule back;
  CHECK_OK(rk_system_guard_rule(guard, &back));
  CHECK(back.has_max_thread && !back.has_highest_cpu_usage && !back.has_avg_rt_micros);
  CHECK_I64(back.max_thread, 7);
  CHECK_FAILS(rk_system_guard_set_rule(NULL, &good), RK_NULL_POINTER, "guard");
  CHECK_FAILS(rk_system_guard_set_rule(guard, NULL), RK_NULL_POINTER, "rule");
  CHECK_FAILS(rk_system_guard_rule(NULL, &back), RK_NULL_POINTER, "guard");
  CHECK_FAILS(rk_system_guard_rule(guard, NULL), RK_NULL_POINTER, "out_rule");

  rk_system_permit *p = (rk_system_permit *)&p;
  rk_system_permit *const p_untouched = p;
  rk_system_threshold t = 77;
  CHECK_FAILS(rk_system_guard_try_acquire(guard, -1, NULL, &p, &t), RK_INVALID_ARGUMENT, "count");
  CHECK(p == p_untouched && t == 77);
  CHECK_FAILS(rk_system_guard_try_acquire(NULL, 1, NULL, &p, &t), RK_NULL_POINTER, "guard");
  CHECK_FAILS(rk_system_guard_try_acquire(guard, 1, NULL, NULL, &t), RK_NULL_POINTER, "out_permit");
  CHECK(t == 77);
  rk_system_stats s;
  CHECK_OK(rk_system_guard_stats(guard, &s));
  CHECK_I64(s.in_flight, 0);
  CHECK_FAILS(rk_system_guard_stats(NULL, &s), RK_NULL_POINTER, "guard");
  CHECK_FAILS(rk_system_guard_stats(guard, NULL), RK_NULL_POINTER, "out_stats");
  CHECK_FAILS(rk_system_permit_release(NULL), RK_NULL_POINTER, "permit");
  /* The decision and the threshold are optional. */
  CHECK_OK(rk_system_guard_try_acquire(guard, 1, NULL, &p, NULL));
  CHECK(p != NULL && p != p_untouched);
  if (p != NULL && p != p_untouched) CHECK_OK(rk_system_permit_release(p));
  rk_system_guard_free(guard);
  rk_load_free(load);
}

int main(void) {
  load_signals();
  bbr_sheds_only_when_overloaded();
  bbr_errors();
  system_guard_names_each_threshold();
  system_guard_errors();
  return check_summary("test_load");
}
