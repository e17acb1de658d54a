/*
 * The three-colour markers: RFC 2697's srTCM and RFC 2698's trTCM,
 * colour-blind and colour-aware, their token counts, and the refill on a
 * manual clock.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "check.h"

static rk_color srtcm_mark(const rk_srtcm *m, int64_t bytes) {
  rk_color c = 99;
  CHECK_OK(rk_srtcm_mark(m, bytes, &c));
  return c;
}

static rk_color srtcm_aware(const rk_srtcm *m, int64_t bytes, rk_color pre) {
  rk_color c = 99;
  CHECK_OK(rk_srtcm_mark_aware(m, bytes, pre, &c));
  return c;
}

static rk_color trtcm_mark(const rk_trtcm *m, int64_t bytes) {
  rk_color c = 99;
  CHECK_OK(rk_trtcm_mark(m, bytes, &c));
  return c;
}

static rk_color trtcm_aware(const rk_trtcm *m, int64_t bytes, rk_color pre) {
  rk_color c = 99;
  CHECK_OK(rk_trtcm_mark_aware(m, bytes, pre, &c));
  return c;
}

#define CHECK_TOKENS(call, first, second)   \
  do {                                      \
    uint64_t a_ = 777, b_ = 777;            \
    CHECK_OK(call(marker, &a_, &b_));       \
    CHECK_I64(a_, first);                   \
    CHECK_I64(b_, second);                  \
  } while (0)

/* CIR 1000 bytes/s, CBS = EBS = 1500 bytes. */
static void srtcm(void) {
  rk_manual_clock *clock = NULL;
  rk_srtcm *marker = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_srtcm_new(1000, 1500, 1500, clock, &marker));
  if (marker == NULL) return;
  CHECK_TOKENS(rk_srtcm_tokens, 1500, 1500); /* both buckets start full */
  CHECK_I64(srtcm_mark(marker, 1500), RK_COLOR_GREEN);
  CHECK_I64(srtcm_mark(marker, 1500), RK_COLOR_YELLOW);
  CHECK_I64(srtcm_mark(marker, 1500), RK_COLOR_RED);
  CHECK_TOKENS(rk_srtcm_tokens, 0, 0);
  /* One second: 1000 tokens, to the committed bucket first. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  CHECK_TOKENS(rk_srtcm_tokens, 1000, 0);
  /* Colour-aware: never better than the packet came. */
  CHECK_I64(srtcm_aware(marker, 500, RK_COLOR_YELLOW), RK_COLOR_RED); /* no excess tokens */
  CHECK_I64(srtcm_aware(marker, 500, RK_COLOR_GREEN), RK_COLOR_GREEN);
  CHECK_I64(srtcm_aware(marker, 100, RK_COLOR_RED), RK_COLOR_RED);
  CHECK_TOKENS(rk_srtcm_tokens, 500, 0);
  /* Two seconds: 1000 fill the committed bucket, the rest overflows to
   * the excess one. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 2000000));
  CHECK_TOKENS(rk_srtcm_tokens, 1500, 1000);
  CHECK_I64(srtcm_aware(marker, 1000, RK_COLOR_YELLOW), RK_COLOR_YELLOW);
  CHECK_TOKENS(rk_srtcm_tokens, 1500, 0);
  /* Tokens arrive one at a time: the k-th at the first microsecond t with
   * floor(t * CIR / 1e6) >= k. */
  rk_srtcm_free(marker);
  marker = NULL;
  CHECK_OK(rk_srtcm_new(3, 1, 0, clock, &marker));
  if (marker == NULL) return;
  CHECK_I64(srtcm_mark(marker, 1), RK_COLOR_GREEN);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 333333));
  CHECK_TOKENS(rk_srtcm_tokens, 0, 0);
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1));
  CHECK_TOKENS(rk_srtcm_tokens, 1, 0);
  /* A zero-byte packet is green and takes nothing. */
  CHECK_I64(srtcm_mark(marker, 0), RK_COLOR_GREEN);
  CHECK_TOKENS(rk_srtcm_tokens, 1, 0);
  rk_srtcm_free(marker);
  rk_srtcm_free(NULL);
  rk_manual_clock_free(clock);
}

/* PIR 2000 bytes/s, PBS 2000; CIR 1000 bytes/s, CBS 1000. */
static void trtcm(void) {
  rk_manual_clock *clock = NULL;
  rk_trtcm *marker = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  CHECK_OK(rk_trtcm_new(2000, 2000, 1000, 1000, clock, &marker));
  if (marker == NULL) return;
  CHECK_TOKENS(rk_trtcm_tokens, 2000, 1000);
  CHECK_I64(trtcm_mark(marker, 1000), RK_COLOR_GREEN);
  CHECK_I64(trtcm_mark(marker, 500), RK_COLOR_YELLOW);
  CHECK_I64(trtcm_mark(marker, 600), RK_COLOR_RED); /* above what is left of the peak */
  CHECK_TOKENS(rk_trtcm_tokens, 500, 0);
  CHECK_I64(trtcm_aware(marker, 100, RK_COLOR_YELLOW), RK_COLOR_YELLOW);
  CHECK_I64(trtcm_aware(marker, 100, RK_COLOR_RED), RK_COLOR_RED);
  CHECK_TOKENS(rk_trtcm_tokens, 400, 0);
  /* Half a second: 1000 peak and 500 committed tokens. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 500000));
  CHECK_TOKENS(rk_trtcm_tokens, 1400, 500);
  CHECK_I64(trtcm_aware(marker, 500, RK_COLOR_GREEN), RK_COLOR_GREEN);
  CHECK_I64(trtcm_aware(marker, 500, RK_COLOR_GREEN), RK_COLOR_YELLOW);
  CHECK_TOKENS(rk_trtcm_tokens, 400, 0);
  rk_trtcm_free(marker);
  rk_trtcm_free(NULL);
  rk_manual_clock_free(clock);
}

static void colour_names(void) {
  CHECK_STR(rk_color_name(RK_COLOR_GREEN), "green");
  CHECK_STR(rk_color_name(RK_COLOR_YELLOW), "yellow");
  CHECK_STR(rk_color_name(RK_COLOR_RED), "red");
  CHECK_STR(rk_color_name(3), NULL);
  CHECK_STR(rk_color_name(UINT32_MAX), NULL);
}

int main(void) {
  srtcm();
  trtcm();
  colour_names();
  return check_summary("test_markers");
}
