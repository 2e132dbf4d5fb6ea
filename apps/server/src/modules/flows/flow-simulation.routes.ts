import {
  entityId,
  envelope,
  errorEnvelope,
  flowSimulationInput,
  flowSimulationStart,
  flowSimulationState,
  projectIdParams,
} from '@callpilot/contracts';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../lib/reply';
import { requireProject } from '../../plugins/project-access';
import type { ModuleOptions } from '../module-options';
import { type FlowSimulation, FlowSimulations, simulatedFlowName } from './flow-simulation';

const flowParams = projectIdParams.extend({ flowId: entityId('流程 ID') });
const simulationParams = flowParams.extend({ simulationId: entityId('模拟 ID') });
const promptParams = simulationParams.extend({
  index: z.coerce
    .number({ error: '提示音序号须为数字' })
    .int({ error: '提示音序号须为整数' })
    .min(0, { error: '提示音序号不能小于 0' })
    .max(10_000, { error: '提示音序号过大' }),
});
const guarded = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope };

/**
 * 模拟 in the flow editor (flow-simulation.ts). The sessions live in this API process's memory:
 * behind a load balancer these routes need sticky sessions or a single API process.
 */
export const flowSimulationRoutes: FastifyPluginAsyncZod<ModuleOptions> = async (app, { db, runtime }) => {
  const tags = ['通话流程'];
  const security = [{ bearerAuth: [] }];
  const url = '/api/project/:projectId/flows/:flowId/simulations';
  const simulations = new FlowSimulations({
    ports: runtime.engine.ports,
    http: runtime.engine.flowHttp,
    speech: runtime.speech,
    onError: (err, context) => runtime.log.warn({ err, context }, 'flow simulation step failed'),
  });
  app.addHook('onClose', () => simulations.close());

  const stateOf = (projectId: string, simulation: FlowSimulation) =>
    simulation.state(
      (index) =>
        `/api/project/${projectId}/flows/${encodeURIComponent(simulation.flowId)}/simulations/${simulation.id}/prompts/${index}`,
    );

  app.post(
    url,
    {
      schema: {
        tags,
        security,
        summary:
          '开始模拟：用编辑器中的草稿（含未保存的修改）运行一次模拟来电，应答于流程等待输入或结束时（不拨号、不发短信、不写通话记录）',
        params: flowParams,
        body: flowSimulationStart,
        response: { 200: envelope(flowSimulationState), ...guarded, 409: errorEnvelope },
      },
      config: { readOnlySafe: true },
    },
    async (req) => {
      const project = requireProject(req);
      const name = await simulatedFlowName(db, project.id, req.params.flowId);
      const simulation = await simulations.start(project.id, req.params.flowId, name, req.body);
      return ok(stateOf(project.id, simulation));
    },
  );

  app.post(
    `${url}/:simulationId/input`,
    {
      schema: {
        tags,
        security,
        summary: '模拟输入：按键、说话、超时或挂机；应答于流程再次等待输入或结束时',
        params: simulationParams,
        body: flowSimulationInput,
        response: { 200: envelope(flowSimulationState), ...guarded, 409: errorEnvelope },
      },
      config: { readOnlySafe: true },
    },
    async (req) => {
      const project = requireProject(req);
      const simulation = simulations.get(project.id, req.params.flowId, req.params.simulationId);
      await simulations.input(simulation, req.body);
      return ok(stateOf(project.id, simulation));
    },
  );

  app.delete(
    `${url}/:simulationId`,
    {
      schema: {
        tags,
        security,
        summary: '结束模拟',
        params: simulationParams,
        response: { 200: envelope(z.null()), ...guarded },
      },
      config: { readOnlySafe: true },
    },
    async (req) => {
      const project = requireProject(req);
      await simulations.end(simulations.get(project.id, req.params.flowId, req.params.simulationId));
      return ok(null);
    },
  );

  app.get(
    `${url}/:simulationId/prompts/:index`,
    {
      schema: {
        tags,
        security,
        summary: '模拟中的一句提示音（audio/wav，离线音色；上传的录音按原样）',
        description: '成功时应答体为 audio/wav 音频；失败时为统一的错误信封。',
        params: promptParams,
      },
    },
    async (req, reply) => {
      const project = requireProject(req);
      const simulation = simulations.get(project.id, req.params.flowId, req.params.simulationId);
      const wav = await simulations.promptAudio(simulation, req.params.index);
      return reply.type('audio/wav').header('Cache-Control', 'private, max-age=600').send(wav);
    },
  );
};
