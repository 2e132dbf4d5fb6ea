import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { DatabaseHandle } from '../../../db/client';
import { OPENDOCK_PREFIX } from '../../../plugins/api-key-auth';
import { claimIdempotencyKey, prepareIdempotency, replayAnswer, settleIdempotencyKey } from './idempotency';
import { type OpendockRouteInfo, routeKey, SECURITY_SCHEME } from './openapi';
import { RequestLogWriter } from './request-log';
import { startRetentionSweep } from './retention';

declare module 'fastify' {
  interface FastifyInstance {
    /** The open API's request log of this process (batched; `flush()` writes what waits). */
    opendockRequestLog: RequestLogWriter;
    /** Every /opendock/v1 route's scope and visibility, for the open API's OpenAPI document. */
    opendockRoutes: ReadonlyMap<string, OpendockRouteInfo>;
  }
}

const isOpendock = (url: string) => url.startsWith(`${OPENDOCK_PREFIX}/`);

/**
 * What every /opendock/v1 route gets besides the key check (plugins/api-key-auth.ts), by path, so
 * the resource routes carry none of it: the request log, Idempotency-Key on POSTs, the retention
 * sweep of both tables, and the route facts the OpenAPI document needs. Registered before the
 * modules, so its onRoute hook sees every route.
 */
export const opendockPlatformPlugin = fp(
  async (app: FastifyInstance, { database }: { database: DatabaseHandle }) => {
    const { db } = database;
    const requestLog = new RequestLogWriter(db, app.log);
    const routes = new Map<string, OpendockRouteInfo>();
    app.decorate('opendockRequestLog', requestLog);
    app.decorate('opendockRoutes', routes);
    app.decorateRequest('idempotency', null);

    const logRequest = async (req: FastifyRequest, reply: FastifyReply) => {
      const key = req.presentedApiKey;
      if (!key) return;
      requestLog.record({
        keyId: key.id,
        projectId: key.projectId,
        at: new Date(Date.now() - reply.elapsedTime),
        method: req.method,
        path: req.url.split('?', 1)[0]!,
        status: reply.statusCode,
        latencyMs: Math.round(reply.elapsedTime),
        ip: req.ip,
      });
    };

    // After parsing (the body is there to fingerprint), before validation.
    const readIdempotencyKey = async (req: FastifyRequest) => {
      if (req.method !== 'POST' || !req.apiKey) return;
      req.idempotency = prepareIdempotency(req, req.apiKey.projectId);
    };

    // After validation: a request its schema refuses has not started, so its 400 is not stored.
    const claimIdempotencyKeyHook = async (req: FastifyRequest, reply: FastifyReply) => {
      const request = req.idempotency;
      if (!request) return;
      const claim = await claimIdempotencyKey(db, request);
      if (claim.kind === 'replay') return replayAnswer(reply, claim.status, claim.answer);
      request.owner = true;
    };

    const storeAnswer = async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      const request = req.idempotency;
      if (!request?.owner) return payload;
      request.owner = false;
      const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      try {
        await settleIdempotencyKey(db, request, reply.statusCode, contentType, payload);
      } catch (err) {
        req.log.warn({ err }, 'idempotent answer not stored');
      }
      return payload;
    };

    // The hooks go on the open API's routes only (the console's requests do not pay for them).
    app.addHook('onRoute', (route) => {
      if (!isOpendock(route.url)) return;
      const config = route.config ?? {};
      const info: OpendockRouteInfo = {
        public: Boolean(config.public),
        anyScope: Boolean(config.anyScope),
        scope: config.apiScope ?? null,
      };
      const methods = [route.method].flat();
      for (const method of methods) routes.set(routeKey(method, route.url), info);
      if (info.public) return;
      // Both documents (the console's /docs/json too) then show the lock and the right scheme.
      if (route.schema && !route.schema.security) route.schema.security = [{ [SECURITY_SCHEME]: [] }];
      const hooks = route as unknown as Record<string, unknown>;
      const add = (name: string, hook: unknown, first = false) => {
        const current = hooks[name];
        const list = current === undefined ? [] : Array.isArray(current) ? current : [current];
        hooks[name] = first ? [hook, ...list] : [...list, hook];
      };
      add('onResponse', logRequest);
      if (!methods.includes('POST')) return;
      add('preValidation', readIdempotencyKey);
      add('preHandler', claimIdempotencyKeyHook);
      // First: @fastify/compress adds its own onSend the same way, and the answer to store is the
      // JSON text, not the compressed stream.
      add('onSend', storeAnswer, true);
    });

    let stopSweep: (() => void) | undefined;
    app.addHook('onReady', async () => {
      requestLog.start();
      stopSweep = startRetentionSweep(db, (err) => app.log.warn({ err }, 'open API retention sweep failed'));
    });
    // preClose: onClose hooks of plugins run after the owner's database.close() (registered later,
    // run first), so the buffered rows are written here; requests still finishing are written by
    // the onClose flush when the database outlives the app (tests, embedding).
    app.addHook('preClose', async () => {
      stopSweep?.();
      await requestLog.flush();
    });
    app.addHook('onClose', async () => {
      await requestLog.stop();
    });
  },
  { name: 'opendock-platform', dependencies: ['api-key-auth'] },
);
