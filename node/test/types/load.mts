// The load-driven limiters as a TypeScript user writes them (type-checked,
// not run): the declarations of lib/load.d.ts through the package's name.
import { Bbr, BbrPermit, ManualClock, ManualLoad, SystemGuard, SystemLoad, SystemPermit } from 'ratekeeper';
import type { BbrOptions, BbrStats, SystemRule, SystemStats, SystemThreshold } from 'ratekeeper';

const load = new ManualLoad({ cpuUsage: 0.5 });
load.setCpuUsage(0.9);
const cpu: number | undefined = load.cpuUsage;
const options: BbrOptions = { windowMs: 10_000, buckets: 100n, cpuThreshold: 0.8, coolDownMicros: 1_000_000n, load };
const bbr = new Bbr(options);
const permit: BbrPermit | undefined = bbr.tryAcquire();
permit?.release();
const stats: BbrStats = bbr.stats();
const minRt: number = stats.minRtMs;

const rule: SystemRule = { qps: 100, maxThread: 10, avgRtMs: 50, highestSystemLoad: 4, highestCpuUsage: 0.9 };
const guard = new SystemGuard({ ...rule, load: SystemLoad.shared(), clock: new ManualClock() });
const { permit: admitted, threshold } = guard.check(2);
const which: SystemThreshold | undefined = threshold;
const held: SystemPermit | undefined = guard.tryAcquire();
guard.setRule({ avgRtMicros: 1500n });
const now: SystemRule = guard.rule;
const entry: SystemStats = guard.stats();
// @ts-expect-error: a threshold is one of five names
const bad: SystemThreshold = 'memory';
// @ts-expect-error: durations are options, not arguments
new Bbr(1000);

export { cpu, minRt, admitted, which, held, now, entry, bad };
