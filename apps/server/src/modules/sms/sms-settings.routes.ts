import {
  envelope,
  errorEnvelope,
  projectIdParams,
  type SmsSettingsView,
  smsSettingsUpdateRequest,
  smsSettingsView,
} from '@callpilot/contracts';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { loadAppSecret } from '../../lib/secret-box';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { smsPushUrls } from './sms-push';
import { assertCanManageSmsSettings, getSmsSettings, saveSmsSettings } from './sms-settings';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/** 短信服务商: members see which provider sends; owners and admins set it and its keys. */
export const smsSettingsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, env, runtime }) => {
  const secret = loadAppSecret(env);
  const tags = ['短信管理'];
  const security = [{ bearerAuth: [] }];
  const url = '/api/project/:projectId/sms/settings';
  /**
   * The push addresses go under the address the vendor reaches this server at: PUBLIC_BASE_URL,
   * else PUBLIC_URL, else the origin the console asked on (right when both share one host).
   */
  const withPushUrls = (req: FastifyRequest, projectId: string, view: SmsSettingsView): SmsSettingsView => {
    if (view.provider === 'outbox') return { ...view, pushUrls: null };
    const base = env.PUBLIC_BASE_URL ?? env.PUBLIC_URL ?? `${req.protocol}://${req.host}`;
    return { ...view, pushUrls: smsPushUrls(secret, base, view.provider, projectId) };
  };

  app.get(
    url,
    {
      schema: {
        tags,
        security,
        summary: '短信服务商设置（密钥只返回是否已填写；云服务商附回执与上行推送地址）',
        params: projectIdParams,
        response: { 200: envelope(smsSettingsView), ...guarded },
      },
    },
    async (req) => {
      const projectId = requireProject(req).id;
      return ok(withPushUrls(req, projectId, await getSmsSettings(db, projectId)));
    },
  );

  app.put(
    url,
    {
      config: {
        audit: { action: 'provider.changed', targetType: 'sms_settings', summary: () => '修改短信服务商' },
      },
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
      const saved = await saveSmsSettings(db, secret, project.id, req.body, runtime.clock.now());
      return ok(withPushUrls(req, project.id, saved));
    },
  );
};
