import { timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { forbidden, unauthorized } from '../lib/errors';
import type { Metrics } from '../runtime/metrics';
import { bearerToken } from './auth';

/** Requests to a path no route matches: one label for all of them, never the raw URL. */
const UNMATCHED_ROUTE = 'unmatched';

/**
 * Loopback and private networks (RFC 1918, IPv6 ULA, link-local): where a deployment's own
 * scraper sits. Narrower than outbound-http's list, which also refuses documentation and
 * multicast ranges a URL must not reach.
 */
const INSIDE = new net.BlockList();
INSIDE.addSubnet('127.0.0.0', 8, 'ipv4');
INSIDE.addSubnet('10.0.0.0', 8, 'ipv4');
INSIDE.addSubnet('172.16.0.0', 12, 'ipv4');
INSIDE.addSubnet('192.168.0.0', 16, 'ipv4');
INSIDE.addSubnet('169.254.0.0', 16, 'ipv4');
INSIDE.addAddress('::1', 'ipv6');
INSIDE.addSubnet('fc00::', 7, 'ipv6');
INSIDE.addSubnet('fe80::', 10, 'ipv6');

export function isInsideAddress(ip: string): boolean {
  // A dual-stack socket reports IPv4 clients as ::ffff:a.b.c.d.
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  if (mapped) return INSIDE.check(mapped, 'ipv4');
  const family = net.isIP(ip);
  if (family === 4) return INSIDE.check(ip, 'ipv4');
  if (family === 6) return INSIDE.check(ip, 'ipv6');
  return false;
}

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
};

/**
 * Who may read /metrics: with METRICS_TOKEN, whoever sends it as a bearer token; without, only
 * loopback and private addresses (a scraper inside the deployment). `req.ip` follows TRUST_PROXY,
 * so behind a proxy it is the client's address, not the proxy's.
 */
function checkScraper(req: FastifyRequest, token: string | undefined): void {
  if (token) {
    const given = bearerToken(req);
    if (!given || !sameSecret(given, token)) {
      throw unauthorized('指标接口需要有效的访问令牌：请求头 Authorization: Bearer <METRICS_TOKEN>');
    }
    return;
  }
  if (!isInsideAddress(req.ip)) {
    throw forbidden('指标接口只对本机和内网地址开放；从外部抓取请设置 METRICS_TOKEN 并携带令牌');
  }
}

/**
 * `GET /metrics` (Prometheus text format) and the HTTP request histogram. Registered before the
 * modules so the hook times every route; each process serves its own metrics.
 */
export const metricsPlugin = fp(
  async (app: FastifyInstance, { metrics, token }: { metrics: Metrics; token: string | undefined }) => {
    app.addHook('onResponse', async (req, reply) => {
      // The route pattern (/api/project/:projectId/...), so ids never become label values.
      const route = req.routeOptions.url ?? UNMATCHED_ROUTE;
      if (route === '/metrics') return;
      metrics.http(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    });

    app.get('/metrics', { schema: { hide: true }, logLevel: 'warn' }, async (req, reply) => {
      checkScraper(req, token);
      const { contentType, body } = await metrics.scrape();
      return reply.header('cache-control', 'no-store').type(contentType).send(body);
    });
  },
  { name: 'metrics' },
);
