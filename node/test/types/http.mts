// The HTTP middleware as a TypeScript user writes it (type-checked, not run):
// Express, Fastify and express-rate-limit are stood in for by the shapes the
// declarations promise, since the package needs none of them.
import { HttpLimiter, RatekeeperStore, TrustedProxies, fastifyRateLimit, parseLimits, rateLimit, responseFields } from 'ratekeeper';
import type { ClientRateLimitInfo, Decision, HeaderStyle, RateItem, RateLimitOptions } from 'ratekeeper';

/** A framework's request, as a TypeScript user's framework types it. */
interface IncomingMessage {
  headers: Record<string, string | string[] | undefined>;
  socket: { remoteAddress?: string };
  method?: string;
  url?: string;
  user?: { id: string };
}
interface ServerResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  hasHeader(name: string): boolean;
  end(body?: string | Uint8Array): unknown;
}

const style: HeaderStyle = 'draft-7';
const options: RateLimitOptions<IncomingMessage> = {
  limit: '100/minute; 1000/hour',
  standardHeaders: style,
  trustedProxies: ['private'],
  exemptPaths: ['/health'],
  key: (req) => req.user?.id ?? 'anonymous',
  cost: (req) => (req.method === 'POST' ? 5 : 1),
  body: (req, decision: Decision) => ({ retryInSeconds: Math.ceil(decision.retryAfterMs / 1000) }),
};
const middleware: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void = rateLimit(options);
// @ts-expect-error: a header style is one of the four names
const badStyle: RateLimitOptions<IncomingMessage> = { limit: '1/second', standardHeaders: 'draft-9' };

const items: RateItem[] = parseLimits('10/minute');
const name: string = items[0].policyName;
const limiter = new HttpLimiter('10/minute', { algorithm: 'gcra', maxKeys: 1000 });
const { decision, parts } = limiter.checkEach('client');
const fields: Record<string, string> = responseFields(decision, { parts: parts.map((d, i): [string, Decision] => [limiter.policyNames[i], d]) });
const client: string = new TrustedProxies(['loopback']).clientAddress('127.0.0.1', undefined, '203.0.113.1');

const store = new RatekeeperStore({ algorithm: 'slidingWindowCounter' });
store.init({ limit: 10, windowMs: 60_000 });
const hits: Promise<ClientRateLimitInfo> = store.increment('k');
const local: boolean = store.localKeys;

const plugin: typeof fastifyRateLimit = fastifyRateLimit;

export { middleware, badStyle, name, fields, client, hits, local, plugin };
