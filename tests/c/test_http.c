/*
 * HTTP rate limiting from C: limits text, a keyed limiter from it, the
 * response's header fields, the client's address behind trusted proxies.
 *
 * 1. rk_http_parse_limits: every form; the count-only call; a bad text is
 *    RK_INVALID_ARGUMENT with the byte position out and in the message;
 *    a buffer too small gets nothing.
 * 2. rk_http_limiter: "2/second; 3/minute" on a manual clock is all or
 *    nothing per key (a refusal by the second takes nothing from the
 *    minute), keys independent, remove resets; bad text, algorithm,
 *    options are typed errors naming the argument.
 * 3. The fields for each style, admitted and refused, one limit and two,
 *    as "Name: value\r\n" lines; the buffer protocol.
 * 4. rk_http_client_address: a forged X-Forwarded-For from an untrusted
 *    peer changes nothing; two trusted proxies are walked through;
 *    Forwarded with a quoted IPv6 and a port; malformed entries stop the
 *    walk; IPv4-mapped IPv6 comes out as IPv4; bad trusted entries.
 * 5. rk_http_client_key: an IPv6 client keyed by its /56 (the default),
 *    /64 or whole address (128), IPv4 whole; a prefix out of 1..128 is
 *    RK_INVALID_ARGUMENT naming ipv6_prefix.
 */
#include <stdlib.h>

#include "check.h"

/* 1. Parsing. */
static void test_parse(void) {
  rk_rate_item items[3];
  size_t count = 0, position = 12345;
  CHECK_OK(rk_http_parse_limits("10/minute; 5 per 2 HOURS | 1/day", items, 3, &count, &position));
  CHECK(count == 3);
  CHECK(position == 12345);
  CHECK_I64(items[0].amount, 10);
  CHECK_I64(items[0].multiples, 1);
  CHECK(items[0].unit == RK_TIME_UNIT_MINUTE);
  CHECK_I64(items[1].amount, 5);
  CHECK_I64(items[1].multiples, 2);
  CHECK(items[1].unit == RK_TIME_UNIT_HOUR);
  CHECK(items[2].unit == RK_TIME_UNIT_DAY);

  count = 0;
  CHECK_OK(rk_http_parse_limits("1/second, 2/month", NULL, 0, &count, NULL));
  CHECK(count == 2);

  /* Each error at its byte. */
  static const struct {
    const char *text;
    size_t position;
    const char *expected;
  } bad[] = {
      {"", 0, "expected an amount"},
      {"0/minute", 0, "expected an amount from 1"},
      {"10 minute", 3, "expected '/' or 'per'"},
      {"10/fortnight", 3, "expected a unit (second, minute, hour, day, month, year)"},
      {"10/0 seconds", 3, "expected a count of units"},
      {"10/minute foo", 10, "expected a separator"},
      {"10/minute;", 10, "expected an amount"},
      {"1/se\xff", 4, "expected UTF-8 text"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    position = 999;
    count = 777;
    CHECK_STATUS(rk_http_parse_limits(bad[i].text, items, 3, &count, &position), RK_INVALID_ARGUMENT);
    CHECK_I64((int64_t)position, (int64_t)bad[i].position);
    CHECK(count == 777);
    CHECK_STR(rk_last_error_argument(), "text");
    char where[64];
    snprintf(where, sizeof where, "at position %zu: ", bad[i].position);
    CHECK(strstr(rk_last_error_message(), where) != NULL);
    CHECK(strstr(rk_last_error_message(), bad[i].expected) != NULL);
  }

  CHECK_STATUS(rk_http_parse_limits("1/second;2/day", items, 1, &count, NULL), RK_BUFFER_TOO_SMALL);
  CHECK_STATUS(rk_http_parse_limits(NULL, items, 1, &count, NULL), RK_NULL_POINTER);
  CHECK_STATUS(rk_http_parse_limits("1/second", items, 1, NULL, NULL), RK_NULL_POINTER);

  /* Policy names as express-rate-limit spells them. */
  char name[32];
  size_t len = 0;
  CHECK_OK(rk_rate_item_policy_name(&items[0], name, sizeof name, &len));
  CHECK_STR(name, "10-in-1min");
  rk_rate_item two_hours = {.amount = 5, .multiples = 2, .unit = RK_TIME_UNIT_HOUR};
  CHECK_OK(rk_rate_item_policy_name(&two_hours, name, sizeof name, &len));
  CHECK_STR(name, "5-in-2hrs");
  rk_rate_item bad_unit = {.amount = 5, .multiples = 1, .unit = 9};
  CHECK_STATUS(rk_rate_item_policy_name(&bad_unit, name, sizeof name, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "unit");
}

/* The fields `limiter` writes for a decision, into a static buffer. */
static const char *fields_of(const rk_http_limiter *limiter, const rk_decision *d, const rk_decision *parts, size_t n,
                             rk_header_style style, bool legacy) {
  static char buf[512];
  size_t len = 0;
  CHECK_OK(rk_http_limiter_write_fields(limiter, d, parts, n, style, legacy, 1700000000, buf, sizeof buf, &len));
  CHECK(len == strlen(buf));
  return buf;
}

/* 2 and 3. The limiter and its fields. */
static void test_limiter_and_fields(void) {
  rk_manual_clock *clock = NULL;
  CHECK_OK(rk_manual_clock_new(&clock));
  rk_keyed_options options = {.max_keys = 100};
  rk_http_limiter *limiter = NULL;
  CHECK_OK(rk_http_limiter_new("2/second; 3/minute", RK_ALGORITHM_FIXED_WINDOW, &options, clock, &limiter, NULL));
  size_t n = 0;
  CHECK_OK(rk_http_limiter_len(limiter, &n));
  CHECK(n == 2);

  rk_decision d, parts[2];
  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  /* The strictest part's, with the latest reset (the minute's). */
  CHECK_DECISION(d, true, 2, 1, 0, 60000000, 0, 1000000);
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false),
            "RateLimit-Policy: \"2-in-1sec\";q=2;w=1, \"3-in-1min\";q=3;w=60\r\n"
            "RateLimit: \"2-in-1sec\";r=1;t=1, \"3-in-1min\";r=2;t=60\r\n");
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_7, false),
            "RateLimit-Policy: 2;w=1, 3;w=60\r\n"
            "RateLimit: limit=2, remaining=1, reset=60\r\n");
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_6, false),
            "RateLimit-Policy: 2;w=1, 3;w=60\r\n"
            "RateLimit-Limit: 2\r\n"
            "RateLimit-Remaining: 1\r\n"
            "RateLimit-Reset: 60\r\n");
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_NONE, true),
            "X-RateLimit-Limit: 2\r\n"
            "X-RateLimit-Remaining: 1\r\n"
            "X-RateLimit-Reset: 1700000060\r\n");

  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  CHECK(d.allowed);
  /* The second refuses; the minute keeps its last unit. */
  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  CHECK(!d.allowed);
  CHECK(!parts[0].allowed);
  CHECK_I64((int64_t)parts[1].remaining, 1);
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false),
            "RateLimit-Policy: \"2-in-1sec\";q=2;w=1, \"3-in-1min\";q=3;w=60\r\n"
            "RateLimit: \"2-in-1sec\";r=0;t=1, \"3-in-1min\";r=1;t=60\r\n"
            "Retry-After: 1\r\n");
  CHECK_STR(fields_of(limiter, &d, parts, 2, RK_HEADER_STYLE_NONE, false), "Retry-After: 1\r\n");

  /* Another key is untouched; a look consumes nothing and needs no parts. */
  CHECK_OK(rk_http_limiter_peek(limiter, "other", 5, 1, &d, NULL, 0));
  CHECK_DECISION(d, true, 2, 1, 0, 60000000, 0, 1000000);
  CHECK_OK(rk_http_limiter_check(limiter, "other", 5, 2, &d, NULL, 0));
  CHECK(d.allowed);

  /* A second later the window admits the minute's last unit, then the
   * minute refuses with the second's unit left. */
  CHECK_OK(rk_manual_clock_advance_micros(clock, 1000000));
  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  CHECK(d.allowed);
  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  CHECK(!d.allowed);
  CHECK(parts[0].allowed);
  CHECK_I64((int64_t)parts[0].remaining, 1);
  CHECK_I64(d.retry_after_micros, 59000000);
  bool removed = false;
  CHECK_OK(rk_http_limiter_remove(limiter, "k", 1, &removed));
  CHECK(removed);
  CHECK_OK(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 2));
  CHECK(d.allowed);

  /* The buffer protocols. */
  size_t len = 0;
  CHECK_OK(rk_http_limiter_write_fields(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false, 0, NULL, 0, &len));
  char *exact = malloc(len + 1);
  CHECK_OK(rk_http_limiter_write_fields(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false, 0, exact, len + 1, &len));
  CHECK(strlen(exact) == len);
  CHECK_STATUS(rk_http_limiter_write_fields(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false, 0, exact, len, &len),
               RK_BUFFER_TOO_SMALL);
  free(exact);
  CHECK_STATUS(rk_http_limiter_check(limiter, "k", 1, 1, &d, parts, 1), RK_BUFFER_TOO_SMALL);
  CHECK_STATUS(rk_http_limiter_check(limiter, "k", 1, -1, &d, parts, 2), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "cost");
  char buf[64];
  CHECK_STATUS(rk_http_limiter_write_fields(limiter, &d, parts, 1, RK_HEADER_STYLE_DRAFT_8, false, 0, buf, 64, &len),
               RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "limits_len");
  CHECK_STATUS(rk_http_limiter_write_fields(limiter, &d, parts, 2, 5, false, 0, buf, 64, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "style");
  CHECK_STATUS(rk_http_limiter_write_fields(limiter, &d, parts, 2, RK_HEADER_STYLE_DRAFT_8, false, -1, buf, 64, &len),
               RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "unix_now_secs");
  rk_http_limiter_free(limiter);
  rk_http_limiter_free(NULL);

  /* Any decisions, named by the caller. */
  rk_decision refused = {.allowed = false, .limit = 5, .remaining = 0, .retry_after_micros = 1500000,
                         .reset_after_micros = 30000000, .window_micros = 60000000};
  const char *names[] = {"per-minute"};
  char out[256];
  CHECK_OK(rk_http_write_fields(&refused, &refused, names, 1, RK_HEADER_STYLE_DRAFT_8, true, 100, out, sizeof out, &len));
  CHECK_STR(out,
            "RateLimit-Policy: \"per-minute\";q=5;w=60\r\n"
            "RateLimit: \"per-minute\";r=0;t=30\r\n"
            "X-RateLimit-Limit: 5\r\n"
            "X-RateLimit-Remaining: 0\r\n"
            "X-RateLimit-Reset: 130\r\n"
            "Retry-After: 2\r\n");
  const char *bad_names[] = {"bad\nname"};
  CHECK_STATUS(rk_http_write_fields(&refused, &refused, bad_names, 1, RK_HEADER_STYLE_DRAFT_6, false, 0, out, sizeof out,
                                    &len),
               RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "names[0]") != NULL);
  CHECK_STATUS(rk_http_write_fields(&refused, NULL, NULL, 0, RK_HEADER_STYLE_DRAFT_6, false, 0, out, sizeof out, &len),
               RK_INVALID_ARGUMENT);

  /* Bad construction. */
  size_t position = 0;
  rk_http_limiter *none = NULL;
  CHECK_STATUS(rk_http_limiter_new("2 per fortnight", RK_ALGORITHM_FIXED_WINDOW, &options, NULL, &none, &position),
               RK_INVALID_ARGUMENT);
  CHECK(position == 6);
  CHECK(none == NULL);
  CHECK_STATUS(rk_http_limiter_new("2/second", 99, &options, NULL, &none, NULL), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "algorithm");
  CHECK_STATUS(rk_http_limiter_new("2000000/second", RK_ALGORITHM_SLIDING_LOG, &options, NULL, &none, NULL),
               RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "limit");
  rk_keyed_options no_keys = {.max_keys = 0};
  CHECK_STATUS(rk_http_limiter_new("2/second", RK_ALGORITHM_FIXED_WINDOW, &no_keys, NULL, &none, NULL),
               RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "max_keys");
  CHECK_STATUS(rk_http_limiter_new("2/second", RK_ALGORITHM_FIXED_WINDOW, NULL, NULL, &none, NULL), RK_NULL_POINTER);
  CHECK(none == NULL);
  rk_manual_clock_free(clock);
}

/* The client address for the given fields into a static buffer. */
static const char *client(const char *peer, const char *forwarded, const char *xff, const rk_trusted_proxies *t) {
  static char buf[64];
  size_t len = 0;
  CHECK_OK(rk_http_client_address(peer, forwarded, xff, t, buf, sizeof buf, &len));
  return buf;
}

/* 4. Client addresses. */
static void test_client_address(void) {
  const char *entries[] = {"10.0.0.0/8", "loopback"};
  rk_trusted_proxies *trusted = NULL;
  CHECK_OK(rk_trusted_proxies_new(entries, 2, &trusted));

  /* An untrusted peer's fields are never read. */
  CHECK_STR(client("203.0.113.5", "for=1.2.3.4", "1.2.3.4", trusted), "203.0.113.5");
  CHECK_STR(client("127.0.0.1", NULL, "1.2.3.4", NULL), "127.0.0.1");
  /* Through two trusted proxies; the client's forged entry is left of them. */
  CHECK_STR(client("10.0.0.2", NULL, "6.6.6.6, 198.51.100.7, 10.0.0.1", trusted), "198.51.100.7");
  /* Forwarded, preferred, with a quoted IPv6 and a port. */
  CHECK_STR(client("::1", "for=\"[2001:db8:cafe::17]:4711\";proto=https", "6.6.6.6", trusted), "2001:db8:cafe::17");
  /* Malformed entries stop the walk at the last good hop. */
  CHECK_STR(client("10.0.0.2", NULL, "1.2.3.4, junk, 10.0.0.1", trusted), "10.0.0.1");
  CHECK_STR(client("10.0.0.2", "for=unknown", NULL, trusted), "10.0.0.2");
  CHECK_STR(client("10.0.0.2", NULL, "1.2.3.4, \xff\xfe", trusted), "10.0.0.2");
  /* IPv4-mapped IPv6 compares and comes out as IPv4. */
  CHECK_STR(client("::ffff:10.0.0.2", NULL, "::ffff:192.0.2.9", trusted), "192.0.2.9");

  /* The buffer protocol, and a peer that is no address. */
  size_t len = 0;
  CHECK_OK(rk_http_client_address("2001:db8::1", NULL, NULL, NULL, NULL, 0, &len));
  CHECK(len == strlen("2001:db8::1"));
  char small[4];
  CHECK_STATUS(rk_http_client_address("2001:db8::1", NULL, NULL, NULL, small, sizeof small, &len), RK_BUFFER_TOO_SMALL);
  CHECK_STATUS(rk_http_client_address("not an ip", NULL, NULL, trusted, small, sizeof small, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "peer");
  CHECK_STATUS(rk_http_client_address(NULL, NULL, NULL, trusted, small, sizeof small, &len), RK_NULL_POINTER);
  rk_trusted_proxies_free(trusted);
  rk_trusted_proxies_free(NULL);

  /* Bad entries name their index. */
  const char *bad[] = {"::1", "10.0.0.0/33"};
  rk_trusted_proxies *none = NULL;
  CHECK_STATUS(rk_trusted_proxies_new(bad, 2, &none), RK_INVALID_ARGUMENT);
  CHECK(strstr(rk_last_error_message(), "entries[1]") != NULL);
  CHECK(strstr(rk_last_error_message(), "prefix length from 0 to 32") != NULL);
  CHECK(none == NULL);
  CHECK_OK(rk_trusted_proxies_new(NULL, 0, &none));
  CHECK_STR(client("10.0.0.2", NULL, "1.2.3.4", none), "10.0.0.2");
  rk_trusted_proxies_free(none);
}

/* The client's key for the given fields and IPv6 prefix. */
static const char *key(const char *peer, const char *xff, const rk_trusted_proxies *t, int32_t prefix) {
  static char buf[64];
  size_t len = 0;
  CHECK_OK(rk_http_client_key(peer, NULL, xff, t, prefix, buf, sizeof buf, &len));
  return buf;
}

/* 5. Client keys: an IPv6 client by its block, /56 by default. */
static void test_client_key(void) {
  const char *entries[] = {"loopback"};
  rk_trusted_proxies *trusted = NULL;
  CHECK_OK(rk_trusted_proxies_new(entries, 1, &trusted));
  CHECK(RK_IPV6_PREFIX_DEFAULT == 56);
  CHECK_STR(key("2001:db8:0:1ff::7", NULL, NULL, RK_IPV6_PREFIX_DEFAULT), "2001:db8:0:100::/56");
  CHECK_STR(key("2001:db8:0:1ff::7", NULL, NULL, 64), "2001:db8:0:1ff::/64");
  CHECK_STR(key("2001:db8:0:1ff::7", NULL, NULL, 128), "2001:db8:0:1ff::7");
  CHECK_STR(key("::1", "2001:db8:0:1aa::9", trusted, RK_IPV6_PREFIX_DEFAULT), "2001:db8:0:100::/56");
  CHECK_STR(key("203.0.113.7", NULL, NULL, 1), "203.0.113.7");
  CHECK_STR(key("::ffff:203.0.113.7", NULL, NULL, 56), "203.0.113.7");

  size_t len = 0;
  char buf[64];
  CHECK_STATUS(rk_http_client_key("2001:db8::1", NULL, NULL, NULL, 0, buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "ipv6_prefix");
  CHECK(strstr(rk_last_error_message(), "from 1 to 128") != NULL);
  CHECK_STATUS(rk_http_client_key("2001:db8::1", NULL, NULL, NULL, 129, buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_http_client_key("2001:db8::1", NULL, NULL, NULL, -1, buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STATUS(rk_http_client_key("nope", NULL, NULL, NULL, 56, buf, sizeof buf, &len), RK_INVALID_ARGUMENT);
  CHECK_STR(rk_last_error_argument(), "peer");
  CHECK_STATUS(rk_http_client_key("::1", NULL, NULL, NULL, 56, buf, sizeof buf, NULL), RK_NULL_POINTER);
  rk_trusted_proxies_free(trusted);
}

int main(void) {
  test_parse();
  test_limiter_and_fields();
  test_client_address();
  test_client_key();
  return check_summary("test_http");
}
