/*
 * NULL and invalid arguments for every algorithm's functions: each failing
 * call returns its status, names the argument in rk_last_error_argument()
 * (and the value in rk_last_error_message()), writes no out-parameter and
 * changes nothing. Every argument the algorithms check is reached from C;
 * so are the C API's own (an unknown algorithm, colour or outcome, a spec
 * field the algorithm does not use, a handle of the wrong algorithm).
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>

#include "check.h"

/* The call must fail with `status`, naming `argument`. */
#define CHECK_FAILS(call, status, argument)        \
  do {                                             \
    CHECK_STATUS(call, status);                    \
    CHECK_STR(rk_last_error_argument(), argument); \
  } while (0)

#define CHECK_INVALID(call, argument) CHECK_FAILS(call, RK_INVALID_ARGUMENT, argument)
#define CHECK_NULL(call, argument) CHECK_FAILS(call, RK_NULL_POINTER, argument)

/* The message must start with `prefix`. */
#define CHECK_MESSAGE_STARTS(prefix)                                                           \
  do {                                                                                         \
    const char *m_ = rk_last_error_message();                                                  \
    check_report(strncmp(m_, prefix, strlen(prefix)) == 0, __FILE__, __LINE__, "message starts " #prefix); \
    if (strncmp(m_, prefix, strlen(prefix)) != 0) fprintf(stderr, "    got \"%s\"\n", m_);    \
  } while (0)

static rk_manual_clock *clock_;
static rk_limiter *bucket_, *gcra_, *meter_, *queue_, *window_;
static rk_srtcm *srtcm_;
static rk_trtcm *trtcm_;
static rk_concurrency_limiter *concurrency_;
static rk_composite_limiter *composite_;
static rk_reservation *reservation_;

/* A limiter handle that must not be written: a failing constructor leaves
 * it as it was. */
#define UNTOUCHED ((void *)&untouched_target)
static int untouched_target;

static void null_handles(void) {
  rk_decision d;
  int64_t i = -777;
  uint64_t u = 777;
  double f = -777.0;
  bool b = true;
  rk_algorithm a = 777;
  rk_color c = 777;
  size_t n = 777;
  rk_reservation *r = UNTOUCHED;
  rk_permit *p = UNTOUCHED;
  CHECK_NULL(rk_limiter_check(NULL, 1, &d), "limiter");
  CHECK_STR(rk_last_error_message(), "rk_limiter_check: limiter is NULL");
  CHECK_NULL(rk_limiter_peek(NULL, 1, &d), "limiter");
  CHECK_NULL(rk_limiter_algorithm(NULL, &a), "limiter");
  CHECK_NULL(rk_gcra_limit(NULL, &u), "limiter");
  CHECK_NULL(rk_window_limit(NULL, &u), "limiter");
  CHECK_NULL(rk_window_set_limit(NULL, 1), "limiter");
  CHECK_NULL(rk_leaky_bucket_meter_level(NULL, &u), "limiter");
  CHECK_NULL(rk_leaky_bucket_queue_acquire(NULL, 1, &d), "limiter");
  CHECK_NULL(rk_token_bucket_reserve(NULL, 1, &r), "limiter");
  CHECK_NULL(rk_token_bucket_wait(NULL, 1, 0, &d), "limiter");
  CHECK_NULL(rk_token_bucket_reserve_within(NULL, 1, 0, &d), "limiter");
  CHECK_NULL(rk_token_bucket_set_rate(NULL, 1.0), "limiter");
  CHECK_NULL(rk_token_bucket_set_burst(NULL, 1), "limiter");
  CHECK_NULL(rk_token_bucket_rate(NULL, &f), "limiter");
  CHECK_NULL(rk_token_bucket_burst(NULL, &u), "limiter");
  CHECK_NULL(rk_token_bucket_tokens(NULL, &f), "limiter");
  CHECK_NULL(rk_reservation_ok(NULL, &b), "reservation");
  CHECK_NULL(rk_reservation_tokens(NULL, &u), "reservation");
  CHECK_NULL(rk_reservation_delay_micros(NULL, &i), "reservation");
  CHECK_NULL(rk_reservation_cancel(NULL), "reservation");
  CHECK_NULL(rk_srtcm_mark(NULL, 1, &c), "marker");
  CHECK_NULL(rk_srtcm_mark_aware(NULL, 1, RK_COLOR_GREEN, &c), "marker");
  CHECK_NULL(rk_srtcm_tokens(NULL, &u, &u), "marker");
  CHECK_NULL(rk_trtcm_mark(NULL, 1, &c), "marker");
  CHECK_NULL(rk_trtcm_mark_aware(NULL, 1, RK_COLOR_GREEN, &c), "marker");
  CHECK_NULL(rk_trtcm_tokens(NULL, &u, &u), "marker");
  CHECK_NULL(rk_concurrency_limiter_try_acquire(NULL, &d, &p), "limiter");
  CHECK_NULL(rk_concurrency_limiter_sample(NULL, 1, 1, false, &u), "limiter");
  CHECK_NULL(rk_concurrency_limiter_limit(NULL, &u), "limiter");
  CHECK_NULL(rk_concurrency_limiter_in_flight(NULL, &u), "limiter");
  CHECK_NULL(rk_permit_release(NULL, RK_OUTCOME_SUCCESS, &u), "permit");
  CHECK_NULL(rk_composite_limiter_len(NULL, &n), "limiter");
  CHECK_NULL(rk_composite_limiter_check(NULL, 1, &d), "limiter");
  CHECK_NULL(rk_composite_limiter_check_each(NULL, 1, &d, &d, 1), "limiter");
  CHECK_NULL(rk_composite_limiter_peek(NULL, 1, &d), "limiter");
  CHECK_I64(i, -777);
  CHECK_I64(u, 777);
  CHECK_DOUBLE(f, -777.0);
  CHECK(b);
  CHECK_I64(a, 777);
  CHECK_I64(c, 777);
  CHECK_I64(n, 777);
  CHECK(r == UNTOUCHED && p == UNTOUCHED);
  /* Freeing NULL does nothing. */
  rk_limiter_free(NULL);
  rk_reservation_free(NULL);
  rk_srtcm_free(NULL);
  rk_trtcm_free(NULL);
  rk_concurrency_limiter_free(NULL);
  rk_composite_limiter_free(NULL);
}

static void null_out_parameters(void) {
  const rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 1, .window_micros = 1};
  rk_gradient_config g;
  rk_aimd_config a;
  CHECK_OK(rk_gradient_config_default(&g));
  CHECK_OK(rk_aimd_config_default(&a));
  uint64_t u;
  rk_limiter *l = UNTOUCHED;
  rk_concurrency_limiter *c = UNTOUCHED;
  rk_composite_limiter *k = UNTOUCHED;
  CHECK_NULL(rk_limiter_new(NULL, clock_, &l), "spec");
  CHECK_NULL(rk_limiter_new(&spec, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_token_bucket(1.0, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_gcra(1, 1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_leaky_bucket_meter(1, 1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_leaky_bucket_queue(1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_leaky_bucket_queue_with_slack(1, 1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_fixed_window(1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_sliding_window(1, 1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_sliding_log(1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_new_sliding_window_counter(1, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_limiter_check(window_, 1, NULL), "out_decision");
  CHECK_NULL(rk_limiter_peek(window_, 1, NULL), "out_decision");
  CHECK_NULL(rk_limiter_algorithm(window_, NULL), "out_algorithm");
  CHECK_NULL(rk_gcra_limit(gcra_, NULL), "out_limit");
  CHECK_NULL(rk_window_limit(window_, NULL), "out_limit");
  CHECK_NULL(rk_leaky_bucket_meter_level(meter_, NULL), "out_level");
  CHECK_NULL(rk_leaky_bucket_queue_acquire(queue_, 1, NULL), "out_decision");
  CHECK_NULL(rk_token_bucket_reserve(bucket_, 1, NULL), "out_reservation");
  CHECK_NULL(rk_token_bucket_wait(bucket_, 1, 0, NULL), "out_decision");
  CHECK_NULL(rk_token_bucket_reserve_within(bucket_, 1, 0, NULL), "out_decision");
  CHECK_NULL(rk_token_bucket_rate(bucket_, NULL), "out_rate");
  CHECK_NULL(rk_token_bucket_burst(bucket_, NULL), "out_burst");
  CHECK_NULL(rk_token_bucket_tokens(bucket_, NULL), "out_tokens");
  CHECK_NULL(rk_reservation_ok(reservation_, NULL), "out_ok");
  CHECK_NULL(rk_reservation_tokens(reservation_, NULL), "out_tokens");
  CHECK_NULL(rk_reservation_delay_micros(reservation_, NULL), "out_micros");
  CHECK_NULL(rk_srtcm_new(1, 1, 1, clock_, NULL), "out_marker");
  CHECK_NULL(rk_srtcm_mark(srtcm_, 1, NULL), "out_color");
  CHECK_NULL(rk_srtcm_mark_aware(srtcm_, 1, RK_COLOR_GREEN, NULL), "out_color");
  CHECK_NULL(rk_srtcm_tokens(srtcm_, NULL, &u), "out_committed");
  CHECK_NULL(rk_srtcm_tokens(srtcm_, &u, NULL), "out_excess");
  CHECK_NULL(rk_trtcm_new(1, 1, 1, 1, clock_, NULL), "out_marker");
  CHECK_NULL(rk_trtcm_mark(trtcm_, 1, NULL), "out_color");
  CHECK_NULL(rk_trtcm_mark_aware(trtcm_, 1, RK_COLOR_GREEN, NULL), "out_color");
  CHECK_NULL(rk_trtcm_tokens(trtcm_, NULL, &u), "out_peak");
  CHECK_NULL(rk_trtcm_tokens(trtcm_, &u, NULL), "out_committed");
  CHECK_NULL(rk_gradient_config_default(NULL), "out_config");
  CHECK_NULL(rk_aimd_config_default(NULL), "out_config");
  CHECK_NULL(rk_concurrency_limiter_new_fixed(1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_concurrency_limiter_new_gradient(&g, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_concurrency_limiter_new_gradient(NULL, clock_, &c), "config");
  CHECK_NULL(rk_concurrency_limiter_new_aimd(&a, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_concurrency_limiter_new_aimd(NULL, clock_, &c), "config");
  CHECK_NULL(rk_concurrency_limiter_try_acquire(concurrency_, NULL, NULL), "out_permit");
  CHECK_NULL(rk_concurrency_limiter_limit(concurrency_, NULL), "out_limit");
  CHECK_NULL(rk_concurrency_limiter_in_flight(concurrency_, NULL), "out_in_flight");
  CHECK_NULL(rk_composite_limiter_new(&spec, 1, clock_, NULL), "out_limiter");
  CHECK_NULL(rk_composite_limiter_new(NULL, 1, clock_, &k), "limits");
  CHECK(l == UNTOUCHED && c == UNTOUCHED && k == UNTOUCHED);
  CHECK_NULL(rk_composite_limiter_len(composite_, NULL), "out_len");
  CHECK_NULL(rk_composite_limiter_check(composite_, 1, NULL), "out_decision");
  rk_decision d;
  CHECK_NULL(rk_composite_limiter_check_each(composite_, 1, NULL, &d, 1), "out_decision");
  CHECK_NULL(rk_composite_limiter_check_each(composite_, 1, &d, NULL, 1), "out_parts");
  CHECK_NULL(rk_composite_limiter_peek(composite_, 1, NULL), "out_decision");

  /* A NULL out-parameter is caught before anything is taken: every limiter
   * here is still whole, nothing is in flight. */
  CHECK_OK(rk_limiter_peek(window_, 1, &d));
  CHECK(d.allowed && d.remaining == 0); /* limit 1: the 1 is still there */
  CHECK_OK(rk_leaky_bucket_meter_level(meter_, &u));
  CHECK_I64(u, 0);
  CHECK_OK(rk_concurrency_limiter_in_flight(concurrency_, &u));
  CHECK_I64(u, 0);
  CHECK_OK(rk_composite_limiter_peek(composite_, 1, &d));
  CHECK(d.allowed);
}

/* Creation with every checked argument out of range. */
static void invalid_creations(void) {
  rk_limiter *l = UNTOUCHED;
  const double bad_rates[] = {-1.0, -1e-300, NAN, -INFINITY};
  for (size_t k = 0; k < sizeof bad_rates / sizeof bad_rates[0]; k++) {
    CHECK_INVALID(rk_limiter_new_token_bucket(bad_rates[k], 1, clock_, &l), "rate");
    CHECK_INVALID(rk_token_bucket_set_rate(bucket_, bad_rates[k]), "rate");
  }
  CHECK_STR(rk_last_error_message(),
            "rk_token_bucket_set_rate: invalid argument rate = -inf: must not be negative or NaN");
  CHECK_INVALID(rk_limiter_new_token_bucket(1.0, -1, clock_, &l), "burst");
  CHECK_STR(rk_last_error_message(),
            "rk_limiter_new_token_bucket: invalid argument burst = -1: must be between 0 and 9223372036854775807");
  CHECK_INVALID(rk_token_bucket_set_burst(bucket_, INT64_MIN), "burst");

  CHECK_INVALID(rk_limiter_new_gcra(-1, 1, 1, clock_, &l), "max_burst");
  CHECK_INVALID(rk_limiter_new_gcra(INT64_MAX, 1, 1, clock_, &l), "max_burst");
  CHECK_INVALID(rk_limiter_new_gcra(1, 0, 1, clock_, &l), "count_per_period");
  CHECK_INVALID(rk_limiter_new_gcra(1, -1, 1, clock_, &l), "count_per_period");
  CHECK_INVALID(rk_limiter_new_gcra(1, 1, 0, clock_, &l), "period_micros");
  CHECK_STR(rk_last_error_message(),
            "rk_limiter_new_gcra: invalid argument period_micros = 0: must be between 1 and 9223372036854775807 microseconds (about 292,271 years)");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_meter(0, 1, 1, clock_, &l), "capacity");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_meter(-1, 1, 1, clock_, &l), "capacity");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_meter(1, 0, 1, clock_, &l), "count_per_period");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_meter(1, 1, -5, clock_, &l), "period_micros");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_queue(-1, 1, clock_, &l), "capacity");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_queue(1, 0, clock_, &l), "interval_micros");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_queue_with_slack(1, 1, -1, clock_, &l), "slack");
  CHECK_INVALID(rk_limiter_new_leaky_bucket_queue_with_slack(-1, 1, 0, clock_, &l), "capacity");
  CHECK_INVALID(rk_limiter_new_fixed_window(0, 1, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_fixed_window(-1, 1, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_fixed_window(1, 0, clock_, &l), "window_micros");
  CHECK_INVALID(rk_limiter_new_sliding_window(0, 4, 4, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_sliding_window((int64_t)UINT32_MAX + 1, 4, 4, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 4, 0, clock_, &l), "sub_windows");
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 17, 17, clock_, &l), "sub_windows");
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 10, 3, clock_, &l), "sub_windows"); /* does not divide */
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 4, -1, clock_, &l), "sub_windows");
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 4, INT64_C(1) << 40, clock_, &l), "sub_windows");
  CHECK_INVALID(rk_limiter_new_sliding_window(1, 0, 1, clock_, &l), "window_micros");
  CHECK_INVALID(rk_limiter_new_sliding_log(0, 1, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_sliding_log(1048577, 1, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_sliding_log(1, -1, clock_, &l), "window_micros");
  CHECK_INVALID(rk_limiter_new_sliding_window_counter(0, 1, clock_, &l), "limit");
  CHECK_INVALID(rk_limiter_new_sliding_window_counter(1, 0, clock_, &l), "window_micros");
  CHECK(l == UNTOUCHED);
  /* The edges that are allowed. */
  CHECK_OK(rk_limiter_new_sliding_log(1048576, 1, clock_, &l));
  rk_limiter_free(l);
  CHECK_OK(rk_limiter_new_leaky_bucket_queue(0, 1, clock_, &l));
  rk_limiter_free(l);
  CHECK_OK(rk_limiter_new_token_bucket(INFINITY, 0, clock_, &l));
  rk_limiter_free(l);

  rk_srtcm *s = UNTOUCHED;
  CHECK_INVALID(rk_srtcm_new(0, 1, 1, clock_, &s), "cir");
  CHECK_INVALID(rk_srtcm_new(-1, 1, 1, clock_, &s), "cir");
  CHECK_INVALID(rk_srtcm_new(1, -1, 1, clock_, &s), "cbs");
  CHECK_INVALID(rk_srtcm_new(1, 1, -1, clock_, &s), "ebs");
  CHECK_INVALID(rk_srtcm_new(1, 0, 0, clock_, &s), "cbs");
  CHECK(s == UNTOUCHED);
  rk_trtcm *t = UNTOUCHED;
  CHECK_INVALID(rk_trtcm_new(1, 1, 2, 1, clock_, &t), "pir"); /* below cir */
  CHECK_INVALID(rk_trtcm_new(-1, 1, 1, 1, clock_, &t), "pir");
  CHECK_INVALID(rk_trtcm_new(1, 0, 1, 1, clock_, &t), "pbs");
  CHECK_INVALID(rk_trtcm_new(1, 1, 0, 1, clock_, &t), "cir");
  CHECK_INVALID(rk_trtcm_new(1, 1, 1, 0, clock_, &t), "cbs");
  CHECK(t == UNTOUCHED);
}

static void invalid_concurrency_configs(void) {
  rk_concurrency_limiter *c = UNTOUCHED;
  CHECK_INVALID(rk_concurrency_limiter_new_fixed(0, clock_, &c), "limit");
  CHECK_INVALID(rk_concurrency_limiter_new_fixed(-3, clock_, &c), "limit");
  rk_gradient_config good;
  CHECK_OK(rk_gradient_config_default(&good));
  struct {
    rk_gradient_config config;
    const char *argument;
  } gradients[] = {
      {good, "initial_limit"}, {good, "initial_limit"}, {good, "min_limit"},     {good, "min_limit"},
      {good, "max_limit"},     {good, "max_limit"},     {good, "smoothing"},     {good, "smoothing"},
      {good, "smoothing"},     {good, "rtt_tolerance"}, {good, "rtt_tolerance"}, {good, "queue_size"},
      {good, "queue_size"},    {good, "backoff_ratio"}, {good, "backoff_ratio"}, {good, "probe_interval"},
  };
  gradients[0].config.initial_limit = 2000;
  gradients[1].config.initial_limit = -1;
  gradients[2].config.min_limit = 0;
  gradients[3].config.min_limit = -1;
  gradients[4].config.max_limit = 0;
  gradients[5].config.max_limit = -1;
  gradients[6].config.smoothing = 0.0;
  gradients[7].config.smoothing = 1.5;
  gradients[8].config.smoothing = NAN;
  gradients[9].config.rtt_tolerance = 0.5;
  gradients[10].config.rtt_tolerance = INFINITY;
  gradients[11].config.queue_size = 5000;
  gradients[12].config.queue_size = -1;
  gradients[13].config.backoff_ratio = 0.4;
  gradients[14].config.backoff_ratio = 1.5;
  gradients[15].config.probe_interval = -1;
  for (size_t k = 0; k < sizeof gradients / sizeof gradients[0]; k++) {
    CHECK_INVALID(rk_concurrency_limiter_new_gradient(&gradients[k].config, clock_, &c), gradients[k].argument);
  }
  rk_aimd_config a;
  CHECK_OK(rk_aimd_config_default(&a));
  struct {
    rk_aimd_config config;
    const char *argument;
  } aimds[] = {{a, "initial_limit"}, {a, "min_limit"},     {a, "max_limit"},          {a, "backoff_ratio"},
               {a, "backoff_ratio"}, {a, "backoff_ratio"}, {a, "rtt_timeout_micros"}, {a, "rtt_timeout_micros"}};
  aimds[0].config.initial_limit = 201;
  aimds[1].config.min_limit = 0;
  aimds[2].config.max_limit = 10;
  aimds[3].config.backoff_ratio = 1.0;
  aimds[4].config.backoff_ratio = 0.49;
  aimds[5].config.backoff_ratio = NAN;
  aimds[6].config.rtt_timeout_micros = 0;
  aimds[7].config.rtt_timeout_micros = -1;
  for (size_t k = 0; k < sizeof aimds / sizeof aimds[0]; k++) {
    CHECK_INVALID(rk_concurrency_limiter_new_aimd(&aimds[k].config, clock_, &c), aimds[k].argument);
  }
  CHECK_STR(rk_last_error_message(),
            "rk_concurrency_limiter_new_aimd: invalid argument rtt_timeout_micros = -1: must be between 1 and 9223372036854775807 microseconds (about 292,271 years)");
  CHECK(c == UNTOUCHED);
}

/* The spec: an unknown algorithm, negative counts, fields the algorithm
 * does not use. */
static void invalid_specs(void) {
  rk_limiter *l = UNTOUCHED;
  rk_limiter_spec spec = {.algorithm = 0, .limit = 1, .window_micros = 1};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "algorithm");
  CHECK_STR(rk_last_error_message(),
            "rk_limiter_new: invalid argument algorithm = 0: must be one of the RK_ALGORITHM_* constants");
  spec.algorithm = 9;
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "algorithm");
  spec.algorithm = RK_ALGORITHM_FIXED_WINDOW;
  spec.burst = 5; /* meant for a token bucket */
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "burst");
  CHECK_STR(rk_last_error_message(),
            "rk_limiter_new: invalid argument burst = 5: must be 0: the algorithm has no such parameter");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_TOKEN_BUCKET, .rate = 1.0, .burst = 1, .limit = 10};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "limit");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_GCRA, .max_burst = 1, .count_per_period = 1,
                           .period_micros = 1, .rate = NAN};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "rate");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_LEAKY_BUCKET_QUEUE, .capacity = 1, .interval_micros = 1,
                           .sub_windows = 4};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "sub_windows");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 1, .window_micros = 1,
                           .period_micros = 1};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "period_micros");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_LEAKY_BUCKET_METER, .capacity = 1, .count_per_period = 1,
                           .period_micros = 1, .interval_micros = 1};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "interval_micros");
  spec = (rk_limiter_spec){.algorithm = RK_ALGORITHM_SLIDING_WINDOW, .limit = -2, .window_micros = 4,
                           .sub_windows = 2};
  CHECK_INVALID(rk_limiter_new(&spec, clock_, &l), "limit");
  CHECK(l == UNTOUCHED);

  /* The composite names the limit at fault. */
  rk_composite_limiter *c = UNTOUCHED;
  const rk_limiter_spec limits[] = {
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 1, .window_micros = 1},
      {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 0, .window_micros = 1},
  };
  CHECK_INVALID(rk_composite_limiter_new(limits, 2, clock_, &c), "limit");
  CHECK_MESSAGE_STARTS("rk_composite_limiter_new: limits[1]: invalid argument limit = 0: must be between 1 and");
  const rk_limiter_spec stray[] = {
      {.algorithm = RK_ALGORITHM_GCRA, .max_burst = 1, .count_per_period = 1, .period_micros = 1, .limit = 3},
  };
  CHECK_INVALID(rk_composite_limiter_new(stray, 1, clock_, &c), "limit");
  CHECK_MESSAGE_STARTS("rk_composite_limiter_new: limits[0]: invalid argument limit = 3: must be 0");
  CHECK_INVALID(rk_composite_limiter_new(limits, 0, clock_, &c), "limits_len");
  CHECK_STR(rk_last_error_message(), "rk_composite_limiter_new: invalid argument limits_len = 0: must hold at least "
                                     "one limit (the value is how many)");
  CHECK_INVALID(rk_composite_limiter_new(NULL, 0, clock_, &c), "limits_len");
  CHECK(c == UNTOUCHED);
}

/* Negative costs, byte counts, round trips; unknown colours. Nothing is
 * taken. */
/* A window's limit out of its bounds (the creation's) changes nothing. */
static void invalid_window_limits(void) {
  rk_limiter *log = NULL, *sliding = NULL;
  CHECK_OK(rk_limiter_new_sliding_log(2, 1000, clock_, &log));
  CHECK_OK(rk_limiter_new_sliding_window(2, 1000, 2, clock_, &sliding));
  if (log == NULL || sliding == NULL) return;
  const int64_t bad[] = {0, -1, INT64_MIN, 1048577};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    CHECK_INVALID(rk_window_set_limit(log, bad[k]), "limit");
  }
  CHECK_STR(rk_last_error_message(),
            "rk_window_set_limit: invalid argument limit = 1048577: must be between 1 and 1048576");
  CHECK_INVALID(rk_window_set_limit(window_, 0), "limit");
  CHECK_INVALID(rk_window_set_limit(sliding, (int64_t)UINT32_MAX + 1), "limit");
  uint64_t limit = 0;
  CHECK_OK(rk_window_limit(log, &limit));
  CHECK_I64(limit, 2);
  CHECK_OK(rk_window_limit(sliding, &limit));
  CHECK_I64(limit, 2);
  rk_decision d;
  CHECK_OK(rk_limiter_check(log, 2, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_limiter_check(log, 1, &d));
  CHECK(!d.allowed);
  rk_limiter_free(log);
  rk_limiter_free(sliding);
}

static void invalid_calls(void) {
  rk_decision d = {.limit = 777};
  rk_reservation *r = UNTOUCHED;
  rk_color c = 777;
  uint64_t u = 777;
  const int64_t bad_costs[] = {-1, INT64_MIN};
  for (size_t k = 0; k < 2; k++) {
    int64_t cost = bad_costs[k];
    CHECK_INVALID(rk_limiter_check(window_, cost, &d), "cost");
    CHECK_INVALID(rk_limiter_peek(window_, cost, &d), "cost");
    CHECK_INVALID(rk_leaky_bucket_queue_acquire(queue_, cost, &d), "cost");
    CHECK_INVALID(rk_token_bucket_reserve(bucket_, cost, &r), "cost");
    CHECK_INVALID(rk_token_bucket_wait(bucket_, cost, 0, &d), "cost");
    CHECK_INVALID(rk_token_bucket_reserve_within(bucket_, cost, 0, &d), "cost");
    CHECK_INVALID(rk_composite_limiter_check(composite_, cost, &d), "cost");
    CHECK_INVALID(rk_composite_limiter_check_each(composite_, cost, &d, &d, 1), "cost");
    CHECK_INVALID(rk_composite_limiter_peek(composite_, cost, &d), "cost");
    CHECK_INVALID(rk_srtcm_mark(srtcm_, cost, &c), "bytes");
    CHECK_INVALID(rk_srtcm_mark_aware(srtcm_, cost, RK_COLOR_GREEN, &c), "bytes");
    CHECK_INVALID(rk_trtcm_mark(trtcm_, cost, &c), "bytes");
    CHECK_INVALID(rk_trtcm_mark_aware(trtcm_, cost, RK_COLOR_GREEN, &c), "bytes");
    CHECK_INVALID(rk_concurrency_limiter_sample(concurrency_, cost, 1, false, &u), "rtt_micros");
    CHECK_INVALID(rk_concurrency_limiter_sample(concurrency_, 1, cost, false, &u), "in_flight");
  }
  CHECK_STR(rk_last_error_message(),
            "rk_concurrency_limiter_sample: invalid argument in_flight = -9223372036854775808: must be between 0 and 9223372036854775807");
  CHECK_STATUS(rk_limiter_check(window_, -1, &d), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_message(),
            "rk_limiter_check: invalid argument cost = -1: must be between 0 and 9223372036854775807");
  CHECK_INVALID(rk_srtcm_mark_aware(srtcm_, 1, 3, &c), "pre_color");
  CHECK_STR(rk_last_error_message(), "rk_srtcm_mark_aware: invalid argument pre_color = 3: must be RK_COLOR_GREEN, "
                                     "RK_COLOR_YELLOW or RK_COLOR_RED");
  CHECK_INVALID(rk_trtcm_mark_aware(trtcm_, 1, UINT32_MAX, &c), "pre_color");
  CHECK_I64(d.limit, 777);
  CHECK(r == UNTOUCHED);
  CHECK_I64(c, 777);
  CHECK_I64(u, 777);
  /* Nothing was taken, marked or sampled. */
  CHECK_OK(rk_limiter_peek(window_, 1, &d));
  CHECK(d.allowed);
  CHECK_OK(rk_leaky_bucket_queue_acquire(queue_, 1, &d));
  CHECK_I64(d.wait_micros, 0);
  double tokens = 0.0;
  CHECK_OK(rk_token_bucket_tokens(bucket_, &tokens));
  CHECK_DOUBLE(tokens, 2.0);
  uint64_t committed = 0, excess = 0;
  CHECK_OK(rk_srtcm_tokens(srtcm_, &committed, &excess));
  CHECK_I64(committed, 100);
  CHECK_I64(excess, 100);
  CHECK_OK(rk_concurrency_limiter_limit(concurrency_, &u));
  CHECK_I64(u, 20);
  CHECK_OK(rk_composite_limiter_peek(composite_, 1, &d));
  CHECK(d.allowed);
}

/* An algorithm's own function on another algorithm's handle. */
static void wrong_algorithms(void) {
  rk_decision d = {.limit = 777};
  rk_reservation *r = UNTOUCHED;
  uint64_t u = 777;
  double f = -777.0;
  CHECK_FAILS(rk_token_bucket_reserve(gcra_, 1, &r), RK_WRONG_ALGORITHM, "limiter");
  CHECK_STR(rk_last_error_message(),
            "rk_token_bucket_reserve: limiter is a gcra limiter; this function needs a token_bucket");
  CHECK_FAILS(rk_token_bucket_wait(window_, 1, 0, &d), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_reserve_within(queue_, 1, 0, &d), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_set_rate(meter_, 1.0), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_set_burst(gcra_, 1), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_rate(gcra_, &f), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_burst(gcra_, &u), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_token_bucket_tokens(window_, &f), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_gcra_limit(bucket_, &u), RK_WRONG_ALGORITHM, "limiter");
  CHECK_STR(rk_last_error_message(), "rk_gcra_limit: limiter is a token_bucket limiter; this function needs a gcra");
  CHECK_FAILS(rk_leaky_bucket_meter_level(queue_, &u), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_window_limit(gcra_, &u), RK_WRONG_ALGORITHM, "limiter");
  CHECK_FAILS(rk_window_set_limit(bucket_, 1), RK_WRONG_ALGORITHM, "limiter");
  CHECK_STR(rk_last_error_message(), "rk_window_set_limit: limiter is a token_bucket limiter; this function needs a window");
  CHECK_FAILS(rk_leaky_bucket_queue_acquire(meter_, 1, &d), RK_WRONG_ALGORITHM, "limiter");
  CHECK_STR(rk_last_error_message(), "rk_leaky_bucket_queue_acquire: limiter is a leaky_bucket_meter limiter; this "
                                     "function needs a leaky_bucket_queue");
  /* The wrong algorithm is reported before a bad cost. */
  CHECK_FAILS(rk_leaky_bucket_queue_acquire(meter_, -1, &d), RK_WRONG_ALGORITHM, "limiter");
  CHECK_I64(d.limit, 777);
  CHECK(r == UNTOUCHED);
  CHECK_I64(u, 777);
  CHECK_DOUBLE(f, -777.0);
  CHECK_STR(rk_status_message(RK_WRONG_ALGORITHM), "wrong algorithm for this function");
  CHECK_STR(rk_status_message(RK_BUFFER_TOO_SMALL), "buffer too small");
}

int main(void) {
  CHECK_OK(rk_manual_clock_new(&clock_));
  CHECK_OK(rk_limiter_new_token_bucket(10.0, 2, clock_, &bucket_));
  CHECK_OK(rk_limiter_new_gcra(1, 1, 1000, clock_, &gcra_));
  CHECK_OK(rk_limiter_new_leaky_bucket_meter(3, 1, 1000, clock_, &meter_));
  CHECK_OK(rk_limiter_new_leaky_bucket_queue(3, 1000, clock_, &queue_));
  CHECK_OK(rk_limiter_new_fixed_window(1, 1000, clock_, &window_));
  CHECK_OK(rk_srtcm_new(100, 100, 100, clock_, &srtcm_));
  CHECK_OK(rk_trtcm_new(200, 100, 100, 100, clock_, &trtcm_));
  CHECK_OK(rk_concurrency_limiter_new_aimd(&(rk_aimd_config){20, 20, 200, 0.9, 5000000}, clock_, &concurrency_));
  const rk_limiter_spec one = {.algorithm = RK_ALGORITHM_SLIDING_LOG, .limit = 2, .window_micros = 1000};
  CHECK_OK(rk_composite_limiter_new(&one, 1, clock_, &composite_));
  if (bucket_ == NULL || gcra_ == NULL || meter_ == NULL || queue_ == NULL || window_ == NULL || srtcm_ == NULL ||
      trtcm_ == NULL || concurrency_ == NULL || composite_ == NULL) {
    return check_summary("test_algorithm_errors");
  }
  CHECK_OK(rk_token_bucket_reserve(bucket_, 0, &reservation_));

  null_handles();
  null_out_parameters();
  invalid_creations();
  invalid_concurrency_configs();
  invalid_specs();
  invalid_calls();
  invalid_window_limits();
  wrong_algorithms();

  rk_reservation_free(reservation_);
  rk_limiter_free(bucket_);
  rk_limiter_free(gcra_);
  rk_limiter_free(meter_);
  rk_limiter_free(queue_);
  rk_limiter_free(window_);
  rk_srtcm_free(srtcm_);
  rk_trtcm_free(trtcm_);
  rk_concurrency_limiter_free(concurrency_);
  rk_composite_limiter_free(composite_);
  rk_manual_clock_free(clock_);
  return check_summary("test_algorithm_errors");
}
