import {
  envelope,
  errorEnvelope,
  pageQuery,
  projectIdParams,
  type TrunkTestEvent,
  trunk,
  trunkEnabledRequest,
  trunkIdParams,
  trunkList,
  trunkStatus,
  trunkTestCallRequest,
  trunkWriteRequest,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { conflict, notFound } from '../../lib/errors';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { TrunkControl } from '../../runtime/trunk-control';
import type { ModuleOptions } from '../module-options';
import { trunkDirectory } from './trunk-directory';
import {
  assertCanManageTrunks,
  createTrunk,
  deleteTrunk,
  findTrunkRow,
  getTrunk,
  getTrunkStatus,
  listTrunks,
  setTrunkEnabled,
  updateTrunk,
} from './trunks.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };
const withTarget = { ...guarded, 404: errorEnvelope };

/** 线路管理: the project's SIP trunks. Members read them; owners and admins manage and test them. */
export const trunksRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const tags = ['线路管理'];
  const security = [{ bearerAuth: [] }];
  // Resolved at start, so an unreadable DATA_DIR/app-secret stops the server instead of a later request.
  const secret = loadAppSecret(env);
  const directory = trunkDirectory(db, secret);
  // Read through on every use: the SIP runtime replaces the simulator's control when it starts,
  // which is after the routes are registered.
  const control: TrunkControl = {
    get unavailable() {
      return runtime.trunks.unavailable;
    },
    get testCallRefusal() {
      return runtime.trunks.testCallRefusal;
    },
    status: (trunkId) => runtime.trunks.status(trunkId),
    testCall: (trunk, number, options) => runtime.trunks.testCall(trunk, number, options),
    changed: (trunkId) => runtime.trunks.changed(trunkId),
  };
  const now = () => runtime.clock.now();
  const base = '/api/project/:projectId/trunks';
  /** Trunks being test-called right now: one at a time each, a test call costs the carrier a call. */
  const testing = new Set<string>();

  app.get(
    base,
    {
      schema: {
        tags,
        security,
        summary: '线路列表（含实时状态与号码数；密码只返回是否已填写与提示）',
        params: projectIdParams,
        querystring: pageQuery,
        response: { 200: envelope(trunkList), ...guarded },
      },
    },
    async (req) => ok(await listTrunks(db, control, requireProject(req).id, req.query, now())),
  );

  app.get(
    `${base}/:trunkId`,
    {
      schema: {
        tags,
        security,
        summary: '线路详情',
        params: trunkIdParams,
        response: { 200: envelope(trunk), ...withTarget },
      },
    },
    async (req) => ok(await getTrunk(db, control, requireProject(req).id, req.params.trunkId, now())),
  );

  app.get(
    `${base}/:trunkId/status`,
    {
      schema: {
        tags,
        security,
        summary: '线路实时状态：注册结果（失败时附运营商原因）、最近一次 OPTIONS 探测',
        params: trunkIdParams,
        response: { 200: envelope(trunkStatus), ...withTarget },
      },
    },
    async (req) => ok(await getTrunkStatus(db, control, requireProject(req).id, req.params.trunkId, now())),
  );

  app.post(
    base,
    {
      config: { audit: { action: 'trunk.changed', targetType: 'trunk', verb: '新增' } },
      schema: {
        tags,
        security,
        summary: '新建线路（所有者或管理员）：注册方式或 IP 对接',
        params: projectIdParams,
        body: trunkWriteRequest,
        response: { 200: envelope(trunk), ...guarded, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageTrunks(project);
      return ok(await createTrunk(db, secret, control, project.id, req.body, now()));
    },
  );

  app.put(
    `${base}/:trunkId`,
    {
      config: {
        audit: { action: 'trunk.changed', targetType: 'trunk', targetParam: 'trunkId', verb: '修改' },
      },
      schema: {
        tags,
        security,
        summary: '修改线路（所有者或管理员；密码留空则保留原值）',
        params: trunkIdParams,
        body: trunkWriteRequest,
        response: { 200: envelope(trunk), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageTrunks(project);
      return ok(await updateTrunk(db, secret, control, project.id, req.params.trunkId, req.body, now()));
    },
  );

  app.put(
    `${base}/:trunkId/enabled`,
    {
      config: {
        audit: {
          action: 'trunk.changed',
          targetType: 'trunk',
          targetParam: 'trunkId',
          summary: (req, d) =>
            `${(req.body as { enabled: boolean }).enabled ? '启用' : '停用'} ${d?.name ?? ''}`,
        },
      },
      schema: {
        tags,
        security,
        summary: '启用或停用线路（所有者或管理员）',
        params: trunkIdParams,
        body: trunkEnabledRequest,
        response: { 200: envelope(trunk), ...withTarget },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageTrunks(project);
      return ok(await setTrunkEnabled(db, control, project.id, req.params.trunkId, req.body.enabled, now()));
    },
  );

  app.delete(
    `${base}/:trunkId`,
    {
      config: {
        audit: { action: 'trunk.changed', targetType: 'trunk', targetParam: 'trunkId', verb: '删除' },
      },
      schema: {
        tags,
        security,
        summary: '删除线路（所有者或管理员；仍有号码使用时拒绝并列出号码）',
        params: trunkIdParams,
        response: { 200: envelope(z.null()), ...withTarget, 409: errorEnvelope },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageTrunks(project);
      await deleteTrunk(db, control, project.id, req.params.trunkId);
      return ok(null);
    },
  );

  app.post(
    `${base}/:trunkId/test-call`,
    {
      schema: {
        tags,
        security,
        summary: '测试呼叫（所有者或管理员）：经线路拨打号码，以 SSE（text/event-stream）逐步返回 SIP 过程',
        description:
          '每个事件一行 `data: <json>`：step（一个 SIP 步骤）若干，最后 done（ok 与结果说明）。服务器未启用 SIP 线路（TELEPHONY=sim）时应答 409。',
        params: trunkIdParams,
        body: trunkTestCallRequest,
        response: { ...withTarget, 409: errorEnvelope },
      },
    },
    async (req, reply) => {
      const project = requireProject(req);
      assertCanManageTrunks(project);
      const trunkId = req.params.trunkId;
      const row = await findTrunkRow(db, project.id, trunkId);
      if (!row) throw notFound('线路不存在');
      if (control.unavailable) {
        throw conflict(`本服务器未启用 SIP 线路：${control.unavailable}，无法发起测试呼叫`);
      }
      if (control.testCallRefusal) throw conflict(control.testCallRefusal);
      if (!row.enabled) throw conflict(`线路「${row.name}」已停用，启用后才能测试呼叫`);
      if (testing.has(trunkId)) throw conflict(`线路「${row.name}」正在进行测试呼叫，请等它结束`);
      // Decrypted only now, after every refusal, and handed to the SIP runtime alone.
      const sipTrunk = await directory.resolve(row);
      if (!sipTrunk) throw conflict('线路密码无法解密（服务器密钥已更换），请重新填写密码后再测试');

      testing.add(trunkId);
      const abort = new AbortController();
      // The user closed the dialog (or the tab): hang up the test call at once.
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      // Hijacked, the reply skips onSend hooks, so compression cannot hold events back.
      reply.hijack();
      reply.raw.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
        Connection: 'keep-alive',
      });
      const send = (event: TrunkTestEvent) => {
        if (!abort.signal.aborted) reply.raw.write(`data: ${JSON.stringify(event)}\n\n`);
      };
      try {
        const outcome = await control.testCall(sipTrunk, req.body.number, {
          onStep: (step) => send({ type: 'step', step }),
          signal: abort.signal,
        });
        send({ type: 'done', ok: outcome.ok, message: outcome.message });
      } catch (err) {
        // Only the error's name: a SIP layer's message may quote what it sent.
        req.log.warn({ err: { name: (err as Error)?.name }, trunkId }, 'trunk test call failed');
        send({ type: 'done', ok: false, message: '测试呼叫异常结束，请查看服务器日志' });
      } finally {
        testing.delete(trunkId);
        reply.raw.end();
      }
    },
  );
};
