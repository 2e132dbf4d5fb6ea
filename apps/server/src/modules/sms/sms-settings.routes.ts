import {
  envelope,
  errorEnvelope,
  projectIdParams,
  smsSettingsUpdateRequest,
  smsSettingsView,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { assertCanManageSmsSettings, getSmsSettings, saveSmsSettings } from './sms-settings';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/** 短信服务商: members see which provider sends; owners and admins set it and its keys. */
export const smsSettingsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const secret = loadAppSecret(env);
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const url = '/api/project/:projectId/sms/settings';

  app.get(
    url,
    {
      schema: {
        tags,
        security,
        summary: '短信服务商设置（密钥只返回是否已填写）',
        params: projectIdParams,
        response: { 200: envelope(smsSettingsView), ...guarded },
      },
    },
    async (req) => ok(await getSmsSettings(db, requireProject(req).id)),
  );

  app.put(
    url,
    {
      schema: {
        tags,
        security,
        summary:
          '设置短信服务商（所有者或管理员；开发发件箱、阿里云或腾讯云；密钥加密保存，不填则保留已保存的同一密钥）',
        params: projectIdParams,
        body: smsSettingsUpdateRequest,
        response: { 200: envelope(smsSettingsView), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      assertCanManageSmsSettings(project);
      return ok(await saveSmsSettings(db, secret, project.id, req.body, runtime.clock.now()));
    },
  );
};
