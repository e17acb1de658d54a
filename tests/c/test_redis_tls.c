/*
 * The Redis store over TLS and as ACL users, against the TLS-only servers
 * of tests/redis/with-redis --tls (see that script for the variables):
 *
 * 1. The test CA (rk_redis_tls_options.ca_file): a limiter decides, its
 *    limit held.
 * 2. Mutual TLS: the client certificate and key connect to a server that
 *    requires them; without them, RK_REDIS_TLS_ERROR.
 * 3. A wrong CA, another name, an expired certificate: RK_REDIS_TLS_ERROR
 *    naming the cause; insecure_skip_verify connects all the same.
 * 4. ACL: the least-privilege user decides; a wrong password is
 *    RK_REDIS_AUTH_ERROR (WRONGPASS); the user without EVALSHA gets
 *    RK_REDIS_AUTH_ERROR (NOPERM) from a check.
 * 5. server_name: 127.0.0.1, whose certificate is for elsewhere.invalid
 *    only, checked against that name, decides; another name is
 *    RK_REDIS_TLS_ERROR.
 */
#define _POSIX_C_SOURCE 200809L

#include "redis_support.h"

static char name_buf[160];

static const char *name(const char *what) { return unique_name(name_buf, sizeof name_buf, what); }

/* Generous: under valgrind a new TLS connection (redis-rs reads the system's
 * roots for each, then the handshake) takes seconds. */
static rk_redis_store_options with_tls(const rk_redis_tls_options *tls) {
  return (rk_redis_store_options){.timeout_micros = 120000000, .connect_timeout_micros = 120000000, .tls = tls};
}

/* A limit of 3 a minute on `store`: three admitted, then refused. */
static void decides(const rk_redis_store *store, const char *what) {
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 60000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(store, name(what), &spec, &l));
  if (l == NULL) return;
  for (int i = 0; i < 4; i++) {
    rk_decision d = {0};
    CHECK_OK(rk_redis_limiter_check(l, "k", 1, 1, &d));
    CHECK(d.allowed == (i < 3));
  }
  rk_redis_limiter_free(l);
}

/* Connecting fails with `expected`, a message containing `cause`, and no
 * store. */
static void refused(const char *url, const rk_redis_store_options *options, rk_status expected, const char *cause) {
  rk_redis_store *s = NULL;
  CHECK_STATUS(rk_redis_store_connect(url, options, &s), expected);
  CHECK(s == NULL);
  if (strstr(rk_last_error_message(), cause) == NULL) {
    fprintf(stderr, "    expected %s in: %s\n", cause, rk_last_error_message());
    CHECK(false);
  }
}

static void test_the_test_ca(void) {
  rk_redis_tls_options tls = {.ca_file = required_env("RATEKEEPER_REDIS_TLS_CA")};
  rk_redis_store_options options = with_tls(&tls);
  rk_redis_store *s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, &s));
  decides(s, "tls-ca");
  rk_redis_store_free(s);
  /* rediss:// alone: the system's roots, which do not hold the test CA. */
  options.tls = NULL;
  refused(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, RK_REDIS_TLS_ERROR, "not signed by a trusted CA");
}

static void test_mutual_tls(void) {
  rk_redis_tls_options tls = {.ca_file = required_env("RATEKEEPER_REDIS_TLS_CA"),
                              .cert_file = required_env("RATEKEEPER_REDIS_TLS_CERT"),
                              .key_file = required_env("RATEKEEPER_REDIS_TLS_KEY")};
  rk_redis_store_options options = with_tls(&tls);
  rk_redis_store *s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_MTLS_URL"), &options, &s));
  decides(s, "tls-mutual");
  rk_redis_store_free(s);
  tls.cert_file = NULL;
  tls.key_file = NULL;
  refused(required_env("RATEKEEPER_REDIS_TLS_MTLS_URL"), &options, RK_REDIS_TLS_ERROR, "client certificate");
}

static void test_certificates_not_to_trust(void) {
  rk_redis_tls_options tls = {.ca_file = required_env("RATEKEEPER_REDIS_TLS_WRONG_CA")};
  rk_redis_store_options options = with_tls(&tls);
  refused(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, RK_REDIS_TLS_ERROR, "not signed by a trusted CA");
  tls.ca_file = required_env("RATEKEEPER_REDIS_TLS_CA");
  refused(required_env("RATEKEEPER_REDIS_TLS_OTHER_NAME_URL"), &options, RK_REDIS_TLS_ERROR, "for another name");
  refused(required_env("RATEKEEPER_REDIS_TLS_EXPIRED_URL"), &options, RK_REDIS_TLS_ERROR, "has expired");
  tls.ca_file = "/nonexistent/ca.crt";
  refused(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, RK_REDIS_TLS_ERROR, "cannot read the TLS CA file");
  /* Verification skipped: the expired certificate is taken. */
  tls.ca_file = NULL;
  tls.insecure_skip_verify = true;
  rk_redis_store *s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_EXPIRED_URL"), &options, &s));
  decides(s, "tls-insecure");
  rk_redis_store_free(s);
}

static void test_acl(void) {
  rk_redis_tls_options tls = {.ca_file = required_env("RATEKEEPER_REDIS_TLS_CA")};
  rk_redis_store_options options = with_tls(&tls);
  options.username = required_env("RATEKEEPER_REDIS_TLS_ACL_USER");
  options.password = required_env("RATEKEEPER_REDIS_TLS_ACL_PASSWORD");
  rk_redis_store *s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, &s));
  decides(s, "acl");
  rk_redis_store_free(s);

  options.password = "wrong";
  refused(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, RK_REDIS_AUTH_ERROR, "WRONGPASS");

  options.username = required_env("RATEKEEPER_REDIS_TLS_NOSCRIPT_USER");
  options.password = required_env("RATEKEEPER_REDIS_TLS_NOSCRIPT_PASSWORD");
  s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_URL"), &options, &s));
  if (s == NULL) return;
  rk_limiter_spec spec = {.algorithm = RK_ALGORITHM_FIXED_WINDOW, .limit = 3, .window_micros = 60000000};
  rk_redis_limiter *l = NULL;
  CHECK_OK(rk_redis_limiter_new(s, name("noscript"), &spec, &l));
  rk_decision d = {0};
  CHECK_STATUS(rk_redis_limiter_check(l, "k", 1, 1, &d), RK_REDIS_AUTH_ERROR);
  CHECK(strstr(rk_last_error_message(), "NOPERM") != NULL);
  bool down = true;
  CHECK_OK(rk_redis_store_is_down(s, &down));
  CHECK(!down);
  rk_redis_limiter_free(l);
  rk_redis_store_free(s);
}

static void test_server_name(void) {
  rk_redis_tls_options tls = {.ca_file = required_env("RATEKEEPER_REDIS_TLS_CA"), .server_name = "elsewhere.invalid"};
  rk_redis_store_options options = with_tls(&tls);
  rk_redis_store *s = NULL;
  CHECK_OK(rk_redis_store_connect(required_env("RATEKEEPER_REDIS_TLS_OTHER_NAME_URL"), &options, &s));
  decides(s, "tls-server-name");
  rk_redis_store_free(s);
  tls.server_name = "localhost";
  refused(required_env("RATEKEEPER_REDIS_TLS_OTHER_NAME_URL"), &options, RK_REDIS_TLS_ERROR, "for another name");
}

int main(void) {
  CHECK_STR(rk_status_message(RK_REDIS_AUTH_ERROR), "redis refused access");
  CHECK_STR(rk_status_message(RK_REDIS_TLS_ERROR), "redis TLS error");
  test_the_test_ca();
  test_mutual_tls();
  test_certificates_not_to_trust();
  test_acl();
  test_server_name();
  return check_summary("test_redis_tls");
}
