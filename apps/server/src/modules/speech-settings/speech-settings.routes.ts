import { envelope, errorEnvelope, projectIdParams, speechSettings } from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { ok } from '../../lib/reply';
import { requireManager, requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { getSpeechSettings, saveSpeechSettings } from './speech-settings.service';

const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope };

/** 语音配置: the project's default and fallback recogniser, fallback voice and timeouts. */
export const speechSettingsRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db }) => {
  const tags = ['语音配置'];
  const security = [{ bearerAuth: [] }];
  const url = '/api/project/:projectId/speech-settings';

  app.get(
    url,
    {
      schema: {
        tags,
        security,
        summary: '语音配置：主/备用识别配置、备用音色与超时',
        params: projectIdParams,
        response: { 200: envelope(speechSettings), ...guarded },
      },
    },
    async (req) => ok(await getSpeechSettings(db, requireProject(req).id)),
  );

  app.put(
    url,
    {
      config: {
        audit: { action: 'provider.changed', targetType: 'speech_settings', summary: () => '修改语音配置' },
      },
      schema: {
        tags,
        security,
        summary: '修改语音配置（识别与合成配置须属于本项目；仅所有者或管理员）',
        params: projectIdParams,
        body: speechSettings,
        response: { 200: envelope(speechSettings), ...guarded },
      },
    },
    async (req) => {
      const project = requireProject(req);
      // The settings decide which paid endpoints every call falls back on.
      requireManager(project, '仅项目所有者或管理员可以修改语音配置');
      return ok(await saveSpeechSettings(db, project.id, req.body));
    },
  );
};
