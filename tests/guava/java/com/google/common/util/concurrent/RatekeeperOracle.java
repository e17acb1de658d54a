/*
 * ratekeeper's oracle: drives the real Guava RateLimiter (from Debian's
 * libguava-java) through scenarios read on stdin and prints what Guava did.
 *
 * It lives in Guava's package only to reach the package-private hooks Guava
 * itself tests with: RateLimiter.SleepingStopwatch (so time is a fake
 * microsecond counter), the SmoothBursty constructor (for bursts other than
 * one second) and the factory that takes a cold factor.
 *
 * Input, one command a line (doubles as the hex of their IEEE-754 bits, so
 * nothing is lost in decimal):
 *   case NAME
 *   bursty RATE_BITS MAX_BURST_BITS
 *   warming RATE_BITS WARMUP_MICROS COLD_FACTOR_BITS
 *   sleep MICROS | acquire PERMITS | try PERMITS TIMEOUT_MICROS
 *   set_rate RATE_BITS | get_rate
 *   end
 * Output, one line per command: "ok", "invalid_argument", a wait in
 * microseconds (acquire), "true"/"false" (try), the rate's bits (get_rate),
 * or "exception CLASS: MESSAGE" for anything else Guava threw.
 */
package com.google.common.util.concurrent;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.util.concurrent.TimeUnit;

public final class RatekeeperOracle {
  /** A stopwatch that only moves when Guava sleeps on it or a scenario sleeps. */
  static final class FakeStopwatch extends RateLimiter.SleepingStopwatch {
    long micros = 0;
    long lastSleep = 0;

    @Override
    protected long readMicros() {
      return micros;
    }

    @Override
    protected void sleepMicrosUninterruptibly(long sleep) {
      lastSleep = sleep;
      advance(sleep);
    }

    void advance(long by) {
      if (by > 0) {
        long sum = micros + by;
        micros = sum < micros ? Long.MAX_VALUE : sum; // saturate, never wrap
      }
    }
  }

  private static double bits(String hex) {
    return Double.longBitsToDouble(Long.parseUnsignedLong(hex, 16));
  }

  private static String bits(double d) {
    return Long.toHexString(Double.doubleToRawLongBits(d));
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8")));
    FakeStopwatch clock = null;
    RateLimiter limiter = null;
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split(" ");
      String reply;
      try {
        switch (w[0]) {
          case "case":
            clock = new FakeStopwatch();
            limiter = null;
            reply = "ok";
            break;
          case "bursty":
            {
              RateLimiter l = new SmoothRateLimiter.SmoothBursty(clock, bits(w[2]));
              l.setRate(bits(w[1]));
              limiter = l;
              reply = "ok";
              break;
            }
          case "warming":
            {
              long warmup = Long.parseLong(w[2]);
              // The public factory's check; the package-private one with a
              // cold factor does not repeat it.
              if (warmup < 0) {
                throw new IllegalArgumentException("warmupPeriod must not be negative: " + warmup);
              }
              limiter = RateLimiter.create(bits(w[1]), warmup, TimeUnit.MICROSECONDS, bits(w[3]), clock);
              reply = "ok";
              break;
            }
          case "sleep":
            clock.advance(Long.parseLong(w[1]));
            reply = "ok";
            break;
          case "acquire":
            clock.lastSleep = -1;
            limiter.acquire(Integer.parseInt(w[1]));
            reply = Long.toString(clock.lastSleep);
            break;
          case "try":
            reply =
                Boolean.toString(
                    limiter.tryAcquire(
                        Integer.parseInt(w[1]), Long.parseLong(w[2]), TimeUnit.MICROSECONDS));
            break;
          case "set_rate":
            limiter.setRate(bits(w[1]));
            reply = "ok";
            break;
          case "get_rate":
            reply = bits(limiter.getRate());
            break;
          case "end":
            reply = "end";
            break;
          default:
            reply = "exception unknown command " + w[0];
        }
      } catch (IllegalArgumentException e) {
        reply = "invalid_argument";
      } catch (RuntimeException e) {
        reply = "exception " + e.getClass().getName() + ": " + e.getMessage();
      }
      out.println(reply);
      if (w[0].equals("end")) {
        out.flush();
      }
    }
    out.flush();
  }
}
