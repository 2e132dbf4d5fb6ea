import {
  doNotCallList,
  doNotCallListQuery,
  envelope,
  normalizeMainlandPhone,
  OPEN_DO_NOT_CALL_MAX,
  OPENDOCK_TAGS,
  openDoNotCallAddRequest,
  openDoNotCallAddResult,
  openDoNotCallPhoneParams,
  openDoNotCallRemoved,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import { listDoNotCall, removeFromDoNotCall } from '../do-not-call/do-not-call.service';
import type { ModuleOptions } from '../module-options';
import { addManyToDoNotCall } from './open-do-not-call.service';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** The project's do-not-call list, kept in step with customers' own opt-out records. */
export const openDoNotCallRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = [OPENDOCK_TAGS.doNotCall];
  const security = openSecurity;
  const BASE = `${OPENDOCK_PREFIX}/do-not-call`;

  app.get(
    BASE,
    {
      config: scope('do_not_call', 'read'),
      schema: {
        tags,
        security,
        summary: '免打扰名单',
        description:
          '分页，可按号码模糊查询。来源 source：opt_out 通话中客户拒绝、manual 手动或接口加入、import 导入。' +
          '名单中的号码不会被呼出任务或单通外呼拨打。',
        querystring: doNotCallListQuery,
        response: { 200: envelope(doNotCallList), ...openFailures },
      },
    },
    async (req) => ok(await listDoNotCall(db, requireApiKey(req).projectId, req.query)),
  );

  app.post(
    BASE,
    {
      config: scope('do_not_call', 'write'),
      schema: {
        tags,
        security,
        summary: '加入免打扰名单',
        description:
          `每次 1-${OPEN_DO_NOT_CALL_MAX} 个号码（中国大陆手机、带区号的固话或 400/800 号码，可带 +86、空格与横线）。` +
          '新加入的号码在 added 中返回，已在名单中的在 existing 中返回（保留原来的原因），格式不正确的在 rejected 中返回；' +
          '每个新加入的号码触发一次 contact.opted_out Webhook 事件。',
        body: openDoNotCallAddRequest,
        response: { 200: envelope(openDoNotCallAddResult), ...openFailures },
      },
    },
    async (req) =>
      ok(await addManyToDoNotCall(db, requireApiKey(req).projectId, req.body.phones, req.body.reason)),
  );

  app.delete(
    `${BASE}/:phone`,
    {
      config: scope('do_not_call', 'write'),
      schema: {
        tags,
        security,
        summary: '移出免打扰名单',
        description: '号码不在名单中时返回 404。',
        params: openDoNotCallPhoneParams,
        response: { 200: envelope(openDoNotCallRemoved), ...openFailures },
      },
    },
    async (req) => {
      const { phone } = req.params;
      await removeFromDoNotCall(db, requireApiKey(req).projectId, phone);
      return ok({ phone: normalizeMainlandPhone(phone) ?? phone, removed: true as const });
    },
  );
};
