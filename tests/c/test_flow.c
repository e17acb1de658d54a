/*
 * Sentinel's flow rule (rk_flow_controller) on a manual clock: the rate
 * limiter's queueing waits, a prioritized request occupying the next
 * window, the thread grade's permits, the rule read back and changed at run
 * time with the statistics kept, and the errors of every field.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdlib.h>

#include "check.h"

/* A call that must fail with `status`, naming `argument`. */
#define CHECK_FAILS(call, status, argument)          \
  do {                                               \
    CHECK_STATUS(call, status);                      \
    CHECK_STR(rk_last_error_argument(), (argument)); \
  } while (0)

static rk_flow_rule rule_of(double count, rk_flow_grade grade, rk_control_behavior behavior) {
  rk_flow_rule rule;
  memset(&rule, 0xAB, sizeof rule);
  CHECK_OK(rk_flow_rule_default(&rule));
  rule.count = count;
  rule.grade = grade;
  rule.control_behavior = behavior;
  return rule;
}

/* Decides one request; returns whether it was admitted, its decision in
 * `*d` and its permit in `*permit`. */
static bool check_one(const rk_flow_controller *flow, int64_t count, bool prioritized, rk_decision *d,
                      rk_flow_permit *permit) {
  bool admitted = !prioritized; /* must be overwritten */
  CHECK_OK(rk_flow_controller_check(flow, count, prioritized, d, &admitted, permit));
  CHECK(admitted == d->allowed);
  return admitted;
}

static rk_flow_stats stats_of(const rk_flow_controller *flow) {
  rk_flow_stats s;
  memset(&s, 0xAB, sizeof s);
  CHECK_OK(rk_flow_controller_stats(flow, &s));
  return s;
}

static void rate_limiter_queues(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_flow_rule rule = rule_of(10.0, RK_FLOW_GRADE_QPS, RK_CONTROL_BEHAVIOR_RATE_LIMITER);
  CHECK_I64(rule.max_queueing_time_ms, 500);
  rk_flow_controller *flow = NULL;
  CHECK_OK(rk_flow_controller_new(&rule, 2, 1000, clock, &flow));
  if (flow == NULL) return;
  /* The example: five permits, then one, wait 0 and 100 ms. */
  rk_decision d;
  rk_flow_permit first, second, more;
  CHECK(check_one(flow, 5, false, &d, &first));
  CHECK_I64(d.wait_micros, 0);
  CHECK(check_one(flow, 1, false, &d, &second));
  CHECK_I64(d.wait_micros, 100000);
  CHECK_I64(second.count, 1);
  /* Four more fill the 500 ms queue; the next is refused, taking nothing. */
  for (int64_t i = 2; i <= 5; i++) {
    CHECK(check_one(flow, 1, false, &d, &more));
    CHECK_I64(d.wait_micros, i * 100000);
    CHECK_OK(rk_flow_controller_release(flow, &more));
  }
  CHECK(!check_one(flow, 1, false, &d, &more));
  CHECK_I64(more.count, 0);
  CHECK_I64(d.retry_after_micros, 100000);
  rk_flow_stats s = stats_of(flow);
  CHECK_DOUBLE(s.pass_qps, 10.0);
  CHECK_DOUBLE(s.block_qps, 1.0);
  CHECK_I64((int64_t)s.in_flight, 2);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 20000));
  CHECK_OK(rk_flow_controller_release(flow, &first));
  CHECK_OK(rk_flow_controller_release(flow, &second));
  s = stats_of(flow);
  CHECK_I64((int64_t)s.in_flight, 0);
  /* Sentinel adds one RT per request and its acquire count to the
   * completions: (4 × 0 + 20 + 20) ms over 4 + 5 + 1 completions. */
  CHECK_DOUBLE(s.avg_rt_millis, 4.0);
  rk_flow_controller_free(flow);
  rk_manual_clock_free(clock);
}

static void prioritized_occupies_the_next_window(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_flow_rule rule = rule_of(2.0, RK_FLOW_GRADE_QPS, RK_CONTROL_BEHAVIOR_DEFAULT);
  rk_flow_controller *flow = NULL;
  CHECK_OK(rk_flow_controller_new(&rule, 2, 1000, clock, &flow));
  if (flow == NULL) return;
  rk_decision d;
  rk_flow_permit p, q;
  CHECK(check_one(flow, 2, false, &d, &p));
  CHECK_OK(rk_flow_controller_release(flow, &p));
  CHECK_OK(rk_manual_clock_advance_micros(clock, 600000));
  CHECK(!check_one(flow, 1, false, &d, &q));
  CHECK(check_one(flow, 1, true, &d, &q));
  CHECK_I64(d.wait_micros, 400000);
  CHECK_I64((int64_t)stats_of(flow).waiting, 1);
  CHECK_OK(rk_flow_controller_release(flow, &q));
  rk_flow_controller_free(flow);
  rk_manual_clock_free(clock);
}

static void thread_grade_and_rules_at_run_time(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_flow_rule rule = rule_of(1.0, RK_FLOW_GRADE_THREAD, 99); /* the thread grade ignores the behaviour */
  rk_flow_controller *flow = NULL;
  CHECK_OK(rk_flow_controller_new(&rule, 2, 1000, clock, &flow));
  if (flow == NULL) return;
  rk_decision d;
  rk_flow_permit held, other;
  CHECK(check_one(flow, 1, false, &d, &held));
  CHECK(!check_one(flow, 1, false, &d, &other));
  CHECK_OK(rk_flow_controller_release(flow, &held));
  CHECK(check_one(flow, 1, false, &d, &other));
  CHECK_OK(rk_flow_controller_release(flow, &other));

  /* A new rule keeps the statistics: two passes so far of QPS 3. */
  rk_flow_rule both = rule_of(3.0, RK_FLOW_GRADE_QPS, RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER);
  both.warm_up_period_sec = 4;
  both.cold_factor = 5;
  both.max_queueing_time_ms = 600;
  CHECK_OK(rk_flow_controller_set_rule(flow, &both));
  rk_flow_rule back;
  memset(&back, 0xAB, sizeof back);
  CHECK_OK(rk_flow_controller_rule(flow, &back));
  CHECK(back.grade == RK_FLOW_GRADE_QPS && back.control_behavior == RK_CONTROL_BEHAVIOR_WARM_UP_RATE_LIMITER);
  CHECK_DOUBLE(back.count, 3.0);
  CHECK_I64(back.warm_up_period_sec, 4);
  CHECK_I64(back.cold_factor, 5);
  CHECK_I64(back.max_queueing_time_ms, 600);
  CHECK_OK(rk_flow_controller_add_pass(flow, 3));
  CHECK_DOUBLE(stats_of(flow).pass_qps, 5.0);

  /* A bad rule is refused, naming its field, and changes nothing. */
  rk_flow_rule bad = rule_of(1.0, RK_FLOW_GRADE_QPS, RK_CONTROL_BEHAVIOR_WARM_UP);
  bad.cold_factor = 1;
  CHECK_FAILS(rk_flow_controller_set_rule(flow, &bad), RK_INVALID_ARGUMENT, "cold_factor");
  CHECK_OK(rk_flow_controller_rule(flow, &back));
  CHECK_I64(back.cold_factor, 5);
  rk_flow_controller_free(flow);
  rk_manual_clock_free(clock);
}

static void errors_name_their_field(void) {
  rk_flow_controller *flow = (rk_flow_controller *)&flow; /* must stay as it is on failure */
  rk_flow_controller *const untouched = flow;
  rk_flow_rule rule = rule_of(-1.0, RK_FLOW_GRADE_QPS, RK_CONTROL_BEHAVIOR_DEFAULT);
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "count");
  rule.count = NAN;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "count");
  rule.count = 1.0;
  rule.grade = 7;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "grade");
  rule.grade = RK_FLOW_GRADE_QPS;
  rule.control_behavior = 4;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "control_behavior");
  rule.control_behavior = RK_CONTROL_BEHAVIOR_WARM_UP;
  rule.warm_up_period_sec = -1;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "warm_up_period_sec");
  rule.warm_up_period_sec = 0;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "warm_up_period_sec");
  rule.warm_up_period_sec = 10;
  rule.control_behavior = RK_CONTROL_BEHAVIOR_RATE_LIMITER;
  rule.max_queueing_time_ms = INT64_C(1) << 31;
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "max_queueing_time_ms");
  rule.max_queueing_time_ms = 500;
  CHECK_FAILS(rk_flow_controller_new(&rule, 3, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "sample_count");
  CHECK_FAILS(rk_flow_controller_new(&rule, -2, 1000, NULL, &flow), RK_INVALID_ARGUMENT, "sample_count");
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 0, NULL, &flow), RK_INVALID_ARGUMENT, "interval_ms");
  CHECK_FAILS(rk_flow_controller_new(NULL, 2, 1000, NULL, &flow), RK_NULL_POINTER, "rule");
  CHECK(flow == untouched);
  CHECK_FAILS(rk_flow_controller_new(&rule, 2, 1000, NULL, NULL), RK_NULL_POINTER, "out_flow");
  CHECK_FAILS(rk_flow_rule_default(NULL), RK_NULL_POINTER, "out_rule");

  flow = NULL;
  CHECK_OK(rk_flow_controller_new(&rule, 2, 1000, NULL, &flow));
  rk_decision d;
  bool admitted;
  rk_flow_permit permit;
  CHECK_FAILS(rk_flow_controller_check(flow, INT64_C(1) << 31, false, &d, &admitted, &permit), RK_INVALID_ARGUMENT,
              "acquire_count");
  CHECK_FAILS(rk_flow_controller_check(flow, -1, false, &d, &admitted, &permit), RK_INVALID_ARGUMENT,
              "acquire_count");
  CHECK_FAILS(rk_flow_controller_check(flow, 1, false, &d, NULL, &permit), RK_NULL_POINTER, "out_admitted");
  CHECK_FAILS(rk_flow_controller_check(NULL, 1, false, &d, &admitted, &permit), RK_NULL_POINTER, "flow");
  CHECK_FAILS(rk_flow_controller_add_pass(flow, -1), RK_INVALID_ARGUMENT, "count");
  CHECK_FAILS(rk_flow_controller_release(flow, NULL), RK_NULL_POINTER, "permit");
  CHECK_FAILS(rk_flow_controller_set_rule(flow, NULL), RK_NULL_POINTER, "rule");
  CHECK_FAILS(rk_flow_controller_stats(flow, NULL), RK_NULL_POINTER, "out_stats");
  /* A NULL decision is allowed: the caller may want the permit alone. */
  CHECK_OK(rk_flow_controller_check(flow, 1, false, NULL, &admitted, &permit));
  CHECK(admitted);
  CHECK_OK(rk_flow_controller_release(flow, &permit));
  rk_flow_controller_free(flow);
  rk_flow_controller_free(NULL);
}

int main(void) {
  rate_limiter_queues();
  prioritized_occupies_the_next_window();
  thread_grade_and_rules_at_run_time();
  errors_name_their_field();
  return check_summary("test_flow");
}
