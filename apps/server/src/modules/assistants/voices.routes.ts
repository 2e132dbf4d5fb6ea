import {
  envelope,
  errorEnvelope,
  projectIdParams,
  ttsPreviewRequest,
  voiceOption,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { normalizeForSpeech } from '../../engine/speech/zh-normalize';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import {
  isOfflineVoice,
  listVoiceOptions,
  previewVoice,
} from '../synthesis-providers/synthesis-providers.service';

const failures = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 503: errorEnvelope };

/** The voices an assistant can speak with and a preview of how it sounds (the editor's 试听). */
export const voicesRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['智能小助手'];
  const security = [{ bearerAuth: [] }];

  app.get(
    '/api/project/:projectId/voices',
    {
      schema: {
        tags,
        security,
        summary: '可选音色：离线音色（无需下载），以及本项目每个语音合成配置的预置音色',
        params: projectIdParams,
        response: { 200: envelope(z.array(voiceOption)), ...failures },
      },
    },
    async (req) => ok(await listVoiceOptions(db, requireProject(req).id)),
  );

  app.post(
    '/api/project/:projectId/tts/preview',
    {
      schema: {
        tags,
        security,
        summary: '试听：用离线音色或语音合成配置的音色把一段文本合成为 WAV 音频（最多 500 字）',
        description:
          '成功时应答体为 audio/wav 音频，头 X-Audio-Duration-Ms 为时长；失败时为统一的错误信封（语音合成服务的错误为中文说明）。',
        params: projectIdParams,
        body: ttsPreviewRequest,
      },
      config: { readOnlySafe: true },
    },
    async (req, reply) => {
      const { text, voice } = req.body;
      const speech = isOfflineVoice(voice)
        ? await runtime.speech().synthesize(text, voice)
        : await previewVoice(
            await runtime.voices.resolve(requireProject(req).id, voice),
            normalizeForSpeech(text),
          );
      return reply
        .type('audio/wav')
        .header('Cache-Control', 'no-store')
        .header('X-Audio-Duration-Ms', String(speech.durationMs))
        .send(speech.audio);
    },
  );
};
