// Sentinel's flow rule as a TypeScript user writes it (type-checked, not
// run): the declarations of lib/flow.d.ts through the package's name.
import { FlowController, FlowPermit, ManualClock } from 'ratekeeper';
import type { ControlBehavior, FlowControllerOptions, FlowGrade, FlowRule, FlowStats } from 'ratekeeper';

const rule: FlowRule = { count: 10, grade: 'qps', controlBehavior: 'rateLimiter', maxQueueingTimeMs: 500 };
const options: FlowControllerOptions = { rule, sampleCount: 2, intervalMs: 1000, clock: new ManualClock() };
const flow = new FlowController(options);
const { decision, permit } = flow.check(5, false);
const waited: number = decision.waitMs;
const held: FlowPermit | undefined = permit;
held?.release();
const entry: Promise<FlowPermit | undefined> = flow.entry(1, true);
flow.setRule({ count: 2, grade: 'thread' });
const grade: FlowGrade = flow.rule.grade;
const behavior: ControlBehavior = flow.rule.controlBehavior;
const stats: FlowStats = flow.stats();
const inFlight: number = stats.inFlight;
flow.addPass(3);
// @ts-expect-error: a behaviour is one of four names
const bad: ControlBehavior = 'warm_up';
// @ts-expect-error: the rule is required
new FlowController({});

export { waited, entry, grade, behavior, inFlight, bad };
