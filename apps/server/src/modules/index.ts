import type { FastifyPluginAsync } from 'fastify';
import { apiKeysRoutes } from './api-keys/api-keys.routes';
import { assistantsRoutes } from './assistants/assistants.routes';
import { voicesRoutes } from './assistants/voices.routes';
import { auditRoutes } from './audit/audit.routes';
import { authRoutes } from './auth/auth.routes';
import { sessionsRoutes } from './auth/sessions.routes';
import { callsRoutes } from './calls/calls.routes';
import { demoMockRoutes } from './demo/demo-mock.routes';
import { doNotCallRoutes } from './do-not-call/do-not-call.routes';
import { flowSimulationRoutes } from './flows/flow-simulation.routes';
import { flowsRoutes } from './flows/flows.routes';
import { healthRoutes } from './health/health.routes';
import { batchTestRoutes } from './knowledge/batch-test.routes';
import { knowledgeRoutes } from './knowledge/knowledge.routes';
import { knowledgeTermsRoutes } from './knowledge/terms.routes';
import { llmProvidersRoutes } from './llm-providers/llm-providers.routes';
import { membersRoutes } from './members/members.routes';
import type { ModuleOptions } from './module-options';
import { numbersRoutes } from './numbers/numbers.routes';
import { oemRoutes } from './oem/oem.routes';
import { oidcRoutes } from './oidc/oidc.routes';
import { opendockRoutes } from './opendock/opendock.routes';
import { opendockPlatformRoutes } from './opendock/platform/platform.routes';
import { projectsRoutes } from './projects/projects.routes';
import { reportsRoutes } from './reports/reports.routes';
import { publishGuard, reviewsRoutes } from './reviews/reviews.routes';
import { smsBatchesRoutes } from './sms/sms-batches.routes';
import { smsMessagesRoutes } from './sms/sms-messages.routes';
import { smsPushRoutes } from './sms/sms-push.routes';
import { smsRecordsRoutes } from './sms/sms-records.routes';
import { smsReviewRoutes } from './sms/sms-review.routes';
import { smsRulesRoutes } from './sms/sms-rules.routes';
import { smsSettingsRoutes } from './sms/sms-settings.routes';
import { speechProvidersRoutes } from './speech-providers/speech-providers.routes';
import { speechSettingsRoutes } from './speech-settings/speech-settings.routes';
import { synthesisProvidersRoutes } from './synthesis-providers/synthesis-providers.routes';
import { taskImportRoutes } from './tasks/import.routes';
import { tasksRoutes } from './tasks/tasks.routes';
import { trunksRoutes } from './trunks/trunks.routes';
import { usersRoutes } from './users/users.routes';
import { voiceClonesRoutes } from './voice-clones/voice-clones.routes';
import { webhooksRoutes } from './webhooks/webhooks.routes';

/** Every HTTP module, registered by app.ts from this one list. */
export const modules: FastifyPluginAsync<ModuleOptions>[] = [
  // Root-level hook (fastify-plugin): must come before the routes it guards.
  publishGuard,
  healthRoutes,
  authRoutes,
  usersRoutes,
  sessionsRoutes,
  auditRoutes,
  projectsRoutes,
  membersRoutes,
  oemRoutes,
  oidcRoutes,
  doNotCallRoutes,
  assistantsRoutes,
  voicesRoutes,
  knowledgeRoutes,
  knowledgeTermsRoutes,
  batchTestRoutes,
  llmProvidersRoutes,
  speechProvidersRoutes,
  synthesisProvidersRoutes,
  speechSettingsRoutes,
  callsRoutes,
  numbersRoutes,
  flowsRoutes,
  flowSimulationRoutes,
  trunksRoutes,
  tasksRoutes,
  taskImportRoutes,
  voiceClonesRoutes,
  demoMockRoutes,
  apiKeysRoutes,
  opendockPlatformRoutes,
  opendockRoutes,
  webhooksRoutes,
  smsMessagesRoutes,
  smsReviewRoutes,
  smsRecordsRoutes,
  smsSettingsRoutes,
  smsPushRoutes,
  smsRulesRoutes,
  smsBatchesRoutes,
  reportsRoutes,
  reviewsRoutes,
];
