import { errorEnvelope } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../lib/errors';
import type { ModuleOptions } from '../module-options';

/** Where the demo flow's HTTP 请求 node looks the caller's bill up (see demo-flow.ts). */
export const DEMO_MOCK_BILL_PATH = '/api/demo-mock/broadband/bill';

/** Requests one address may make per window: plenty for trying flows, nothing for abuse. */
export const DEMO_MOCK_LIMIT = 60;
const WINDOW_MS = 60_000;
/** Addresses remembered at most, so a flood from many addresses cannot grow the map without bound. */
const MAX_ADDRESSES = 10_000;

export const demoBill = z.object({
  code: z.literal(0),
  data: z.object({ amount: z.string(), dueDate: z.string(), plan: z.string() }),
});

/**
 * A fixed window per address, in this process's memory: the endpoint serves canned data, so a
 * limit that is per process (not shared across API processes) is enough to keep it from being
 * used as free load.
 */
export function windowLimiter(limit: number, windowMs: number, now: () => number = Date.now) {
  const windows = new Map<string, { startedAt: number; count: number }>();
  return (key: string): boolean => {
    const at = now();
    let window = windows.get(key);
    if (!window || at - window.startedAt >= windowMs) {
      if (!window && windows.size >= MAX_ADDRESSES) {
        for (const [k, w] of windows) if (at - w.startedAt >= windowMs) windows.delete(k);
        if (windows.size >= MAX_ADDRESSES) return false;
      }
      window = { startedAt: at, count: 0 };
      windows.set(key, window);
    }
    window.count++;
    return window.count <= limit;
  };
}

/**
 * 演示接口: a stand-in for a business's own system, so the demo flow's HTTP node has something
 * real to call. Public (a flow's request carries no console session) and holds no project data.
 */
export const demoMockRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app) => {
  const allow = windowLimiter(DEMO_MOCK_LIMIT, WINDOW_MS);

  app.get(
    DEMO_MOCK_BILL_PATH,
    {
      schema: {
        tags: ['演示'],
        summary:
          '演示用账单查询接口（虚构的星河宽带业务系统，供演示流程的 HTTP 请求节点调用；每个地址每分钟最多 60 次）',
        querystring: z.object({
          phone: z
            .string({ error: '请提供 phone（主叫号码）' })
            .trim()
            .regex(/^\+?\d{3,20}$/, { error: '字段 phone：号码须为 3-20 位数字' }),
        }),
        response: { 200: demoBill, 400: errorEnvelope, 429: errorEnvelope },
      },
      logLevel: 'warn',
    },
    async (req) => {
      if (!allow(req.ip)) throw new AppError(429, 'RATE_LIMITED', '请求过于频繁，请稍后再试');
      return { code: 0 as const, data: { amount: '128.00', dueDate: '2026-12-05', plan: '500M 光宽带' } };
    },
  );
};
