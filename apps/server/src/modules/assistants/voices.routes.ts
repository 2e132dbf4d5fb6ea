import {
  envelope,
  errorEnvelope,
  projectIdParams,
  ttsPreviewRequest,
  voiceOption,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import type { ModuleOptions } from '../module-options';

const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 503: errorEnvelope };

/** The offline voices and a preview of how an assistant sounds (the test chat's 播放 button). */
export const voicesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { runtime }) => {
  const tags = ['智能小助手'];
  const security = [{ bearerAuth: [] }];

  app.get(
    '/api/project/:projectId/voices',
    {
      schema: {
        tags,
        security,
        summary: '可选音色（离线合成，无需下载）',
        params: projectIdParams,
        response: { 200: envelope(z.array(voiceOption)), ...failures },
      },
    },
    async () => ok(runtime.speech().voices()),
  );

  app.post(
    '/api/project/:projectId/tts/preview',
    {
      schema: {
        tags,
        security,
        summary: '试听：把一段文本合成为 WAV 音频（最多 500 字）',
        description: '成功时应答体为 audio/wav 音频，头 X-Audio-Duration-Ms 为时长；失败时为统一的错误信封。',
        params: projectIdParams,
        body: ttsPreviewRequest,
      },
    },
    async (req, reply) => {
      const speech = await runtime.speech().synthesize(req.body.text, req.body.voice);
      return reply
        .type(speech.mimeType)
        .header('Cache-Control', 'no-store')
        .header('X-Audio-Duration-Ms', String(speech.durationMs))
        .send(speech.audio);
    },
  );
};
