import {
  assistantListQuery,
  envelope,
  OPENDOCK_TAGS,
  openAssistant,
  openAssistantIdParams,
  openAssistantList,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { OPENDOCK_PREFIX, requireApiKey } from '../../plugins/api-key-auth';
import type { ModuleOptions } from '../module-options';
import { getOpenAssistant, listOpenAssistants } from './open-assistants.service';
import { openFailures, openSecurity, scope } from './opendock-schema';

/** Assistants are edited in the console; customers' systems read them to place calls. */
export const openAssistantsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = [OPENDOCK_TAGS.assistants];
  const security = openSecurity;

  app.get(
    `${OPENDOCK_PREFIX}/assistants`,
    {
      config: scope('assistants', 'read'),
      schema: {
        tags,
        security,
        summary: '智能小助手列表',
        description:
          '分页，可按关键词、用途与状态筛选。每个小助手带当前线上版本 liveVersion 与全部已发布版本（发布时间、说明、' +
          '变量）：发起呼叫时的 assistantVersion 与 variables 按此填写。小助手在控制台编辑与发布。',
        querystring: assistantListQuery,
        response: { 200: envelope(openAssistantList), ...openFailures },
      },
    },
    async (req) => ok(await listOpenAssistants(db, requireApiKey(req).projectId, req.query)),
  );

  app.get(
    `${OPENDOCK_PREFIX}/assistants/:assistantId`,
    {
      config: scope('assistants', 'read'),
      schema: {
        tags,
        security,
        summary: '智能小助手详情与已发布版本',
        params: openAssistantIdParams,
        response: { 200: envelope(openAssistant), ...openFailures },
      },
    },
    async (req) => ok(await getOpenAssistant(db, requireApiKey(req).projectId, req.params.assistantId)),
  );
};
