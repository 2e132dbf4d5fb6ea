// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assistantConfig } from '@callpilot/contracts';
import type { Database } from '../../db/client';
import { smsFollowUpRules, smsSignatures, smsTemplates } from '../../db/schema';
import { serverRoot } from '../../lib/paths';
import { createAssistant, publishAssistant } from '../assistants/assistants.service';
import { findTemplate } from '../assistants/assistants.templates';
import { createKnowledgeBase, uploadDocuments } from '../knowledge/knowledge.service';

export const DEMO_FAQ_FILE = '宽带业务常见问题.md';
export const DEMO_KNOWLEDGE_BASE_NAME = '星河宽带常见问题';

/** Read from the source tree, which ships with the server (the bundle in dist/ has no copy). */
export const demoFaqPath = () => path.join(serverRoot(), 'src/modules/demo/fixtures', DEMO_FAQ_FILE);

/**
 * Something to try right after the first start: a knowledge base built from a real FAQ (queued;
 * the background indexer makes it searchable within seconds) and three assistants from the
 * built-in templates. The broadband follow-up one is linked to the FAQ and published, so the
 * test chat answers questions about packages, installation and moving from the first message.
 */
export async function seedDemoContent(db: Database, projectId: string, userId: string) {
  const base = await createKnowledgeBase(db, projectId, {
    name: DEMO_KNOWLEDGE_BASE_NAME,
    description: '虚构运营商“星河宽带”的套餐、安装、移机、报修、账单与销户问答，供试用知识库与测试对话。',
    // Every question-answer paragraph of the FAQ is 95-140 characters: at 160 each becomes one
    // segment of its own, so a hit answers exactly the question asked.
    chunkSize: 160,
    chunkOverlap: 0,
  });
  await uploadDocuments(db, projectId, base.id, [
    { fileName: DEMO_FAQ_FILE, bytes: fs.readFileSync(demoFaqPath()), truncated: false },
  ]);

  const fromTemplate = (key: string) => {
    const template = findTemplate(key);
    if (!template) throw new Error(`demo template ${key} is missing`);
    return template;
  };

  const followUp = fromTemplate('customer-follow-up');
  const broadband = await createAssistant(
    db,
    projectId,
    userId,
    {
      name: '宽带客户回访',
      description: '回访星河宽带新装用户，解答套餐、安装、移机等问题（已关联知识库）。',
      use: 'both',
      status: 'enabled',
      config: assistantConfig.parse({
        ...followUp.config,
        knowledge: { baseIds: [base.id], topK: 3, scoreThreshold: 0.3 },
        conversation: { ...followUp.config.conversation, transferNumber: '400-800-6688' },
      }),
    },
    followUp.key,
  );
  await publishAssistant(db, projectId, broadband.id, userId, '演示项目初始版本');

  for (const [key, name] of [
    ['event-invitation', '智慧家庭体验日邀约'],
    ['appointment-reminder', '上门安装预约提醒'],
  ] as const) {
    const template = fromTemplate(key);
    await createAssistant(
      db,
      projectId,
      userId,
      {
        name,
        description: template.description,
        use: template.use,
        status: 'enabled',
        config: template.config,
      },
      key,
    );
  }
  await seedDemoSms(db, projectId, userId, broadband.id);
  return { knowledgeBaseId: base.id, publishedAssistantId: broadband.id };
}

/**
 * 短信管理 ready to try: a signature and two templates already approved (as the platform's
 * reviewer would, since the demo sends through the development outbox only), and a follow-up rule
 * on the broadband assistant, so a test call graded A or B leaves an SMS record to open.
 */
async function seedDemoSms(db: Database, projectId: string, userId: string, assistantId: string) {
  const now = new Date();
  const reviewed = {
    status: 'approved' as const,
    provider: 'outbox',
    submittedAt: now,
    reviewedAt: now,
    createdBy: userId,
  };
  const signatureId = randomUUID();
  await db.insert(smsSignatures).values({
    id: signatureId,
    projectId,
    name: '星河宽带',
    source: 'enterprise',
    remark: '演示项目的签名（已由平台审核通过）',
    ...reviewed,
  });
  const templateId = randomUUID();
  await db.insert(smsTemplates).values([
    {
      id: templateId,
      projectId,
      name: '回访感谢',
      type: 'notification',
      content: '感谢您接听星河宽带回访。套餐、安装、移机问题可致电4008006688咨询，我们随时为您服务。',
      variables: [],
      remark: '回访后发送',
      ...reviewed,
    },
    {
      id: randomUUID(),
      projectId,
      name: '提速活动',
      type: 'marketing',
      content: '${name}您好，宽带免费提速至1000M活动进行中，详询4008006688。拒收请回复R',
      variables: ['name'],
      remark: '活动通知',
      ...reviewed,
    },
  ]);
  await db.insert(smsFollowUpRules).values({
    id: randomUUID(),
    projectId,
    ownerType: 'assistant',
    ownerId: assistantId,
    trigger: 'grade',
    grades: ['A', 'B'],
    signatureId,
    templateId,
    variableMap: {},
  });
}
