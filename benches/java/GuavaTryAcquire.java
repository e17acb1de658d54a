// Guava's own RateLimiter.tryAcquire(), timed in the same run as
// ratekeeper's benchmarks: the jar ratekeeper reproduces (Debian's
// libguava-java, the same one the differential test runs against).
//
//   javac -cp /usr/share/java/guava.jar -d OUT GuavaTryAcquire.java
//   java -cp /usr/share/java/guava.jar:OUT GuavaTryAcquire [--quick]
//
// (scripts/bench.sh does both.) Two workloads, as everywhere in benches/:
// every call admitted (RateLimiter.create(1e9)) and every call refused
// (create(1e-3), its one permit taken), one thread. After warm-up rounds
// for the JIT, rounds alternate the workloads; each times enough calls for
// about 20 ms; the figure is the median round. Prints ratekeeper-bench/1
// JSON on standard output.

import com.google.common.util.concurrent.RateLimiter;
import java.util.Arrays;

public final class GuavaTryAcquire {
  private GuavaTryAcquire() {}

  private static double nsPerCall(RateLimiter limiter, long calls, boolean expected) {
    long wrong = 0;
    long start = System.nanoTime();
    for (long i = 0; i < calls; i++) {
      if (limiter.tryAcquire() != expected) {
        wrong++;
      }
    }
    double ns = (double) (System.nanoTime() - start) / calls;
    if (wrong != 0) {
      throw new IllegalStateException(wrong + " of " + calls + " calls were not " + (expected ? "admitted" : "refused"));
    }
    return ns;
  }

  public static void main(String[] args) {
    boolean quick = args.length > 0 && args[0].equals("--quick");
    int rounds = quick ? 5 : 31;
    int warmups = quick ? 3 : 10;
    RateLimiter admitting = RateLimiter.create(1e9);
    RateLimiter refusing = RateLimiter.create(1e-3);
    if (!refusing.tryAcquire()) {
      throw new IllegalStateException("the first call must be admitted");
    }
    RateLimiter[] limiters = {admitting, refusing};
    boolean[] expected = {true, false};
    String[] workloads = {"every call admitted, 1 thread", "every call refused, 1 thread"};
    long[] calls = new long[2];
    for (int w = 0; w < 2; w++) {
      for (int i = 0; i < warmups; i++) {
        nsPerCall(limiters[w], 200_000, expected[w]);
      }
      calls[w] = Math.max(10_000, (long) (20e6 / nsPerCall(limiters[w], 200_000, expected[w])));
    }
    double[][] samples = new double[2][rounds];
    for (int r = 0; r < rounds; r++) {
      for (int w = 0; w < 2; w++) {
        samples[w][r] = nsPerCall(limiters[w], calls[w], expected[w]);
      }
    }
    StringBuilder rows = new StringBuilder();
    for (int w = 0; w < 2; w++) {
      Arrays.sort(samples[w]);
      rows.append(w == 0 ? "" : ", ")
          .append(String.format(
              "{\"workload\": \"%s\", \"contender\": \"Guava %sRateLimiter.tryAcquire()\", \"value\": %.3f}",
              workloads[w], guavaVersion(), samples[w][rounds / 2]));
    }
    System.out.printf(
        "{\"format\": \"ratekeeper-bench/1\", \"suite\": \"java\", \"title\": \"Java: Guava's RateLimiter.tryAcquire()\", "
            + "\"command\": \"scripts/bench.sh (benches/java)\", \"notes\": \"Java %s; median of %d rounds of about 20 ms after %d warm-up rounds.\", "
            + "\"tables\": [{\"title\": \"ns per call\", \"unit\": \"ns\", \"rows\": [%s]}]}%n",
        System.getProperty("java.version"), rounds, warmups, rows);
  }

  /** The jar's version: its manifest's, or what the caller passes as -Dguava.version. */
  private static String guavaVersion() {
    String v = RateLimiter.class.getPackage().getImplementationVersion();
    if (v == null) {
      v = System.getProperty("guava.version", "");
    }
    return v.isEmpty() ? "" : v + " ";
  }
}
