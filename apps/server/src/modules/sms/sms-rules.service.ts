import { randomUUID } from 'node:crypto';
import {
  type IntentGrade,
  SMS_REVIEW_STATUS_LABELS,
  type SmsFollowUpRule,
  type SmsVariableSource,
  type smsFollowUpRuleWriteRequest,
} from '@callpilot/contracts';
import { and, asc, eq, inArray } from 'drizzle-orm';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { assistants, callTasks, smsFollowUpRules, smsSignatures, smsTemplates } from '../../db/schema';
import { badRequest, notFound } from '../../lib/errors';

/**
 * 跟进规则 (follow-up SMS rules) of an assistant or a task: which template to send after its calls,
 * on which trigger, and where each template variable's value comes from. A rule may be saved while
 * its signature or template is still under review (people prepare both at once); the list says
 * what is missing, and the send itself refuses what is not 已通过 (sms-send.service.ts).
 */

type RuleRow = typeof smsFollowUpRules.$inferSelect;
type RuleWrite = z.output<typeof smsFollowUpRuleWriteRequest>;
export type RuleOwner = { ownerType: 'assistant' | 'task'; ownerId: string };

const OWNER_LABEL = { assistant: '助手', task: '任务' } as const;

async function requireOwner(db: Database, projectId: string, owner: RuleOwner) {
  const table = owner.ownerType === 'assistant' ? assistants : callTasks;
  const [row] = await db
    .select({ id: table.id })
    .from(table)
    .where(and(eq(table.projectId, projectId), eq(table.id, owner.ownerId)))
    .limit(1);
  if (!row) throw notFound(`${OWNER_LABEL[owner.ownerType]}不存在`);
}

async function signaturesAndTemplates(db: Database, projectId: string, rows: RuleRow[]) {
  const signatureIds = [...new Set(rows.map((r) => r.signatureId))];
  const templateIds = [...new Set(rows.map((r) => r.templateId))];
  const [signatures, templates] = await Promise.all([
    signatureIds.length
      ? db
          .select()
          .from(smsSignatures)
          .where(and(eq(smsSignatures.projectId, projectId), inArray(smsSignatures.id, signatureIds)))
      : [],
    templateIds.length
      ? db
          .select()
          .from(smsTemplates)
          .where(and(eq(smsTemplates.projectId, projectId), inArray(smsTemplates.id, templateIds)))
      : [],
  ]);
  return {
    signatures: new Map(signatures.map((s) => [s.id, s])),
    templates: new Map(templates.map((t) => [t.id, t])),
  };
}

function toRules(
  rows: RuleRow[],
  found: Awaited<ReturnType<typeof signaturesAndTemplates>>,
): SmsFollowUpRule[] {
  return rows.map((row) => {
    const signature = found.signatures.get(row.signatureId);
    const template = found.templates.get(row.templateId);
    const problems: string[] = [];
    if (!signature) problems.push('签名已删除');
    else if (signature.status !== 'approved')
      problems.push(`签名【${signature.name}】尚未通过审核（${SMS_REVIEW_STATUS_LABELS[signature.status]}）`);
    if (!template) problems.push('模板已删除');
    else if (template.status !== 'approved')
      problems.push(`模板「${template.name}」尚未通过审核（${SMS_REVIEW_STATUS_LABELS[template.status]}）`);
    return {
      id: row.id,
      ownerType: row.ownerType,
      ownerId: row.ownerId,
      trigger: row.trigger,
      grades: row.grades as IntentGrade[],
      signatureId: row.signatureId,
      signatureName: signature?.name ?? '',
      templateId: row.templateId,
      templateName: template?.name ?? '',
      variableMap: row.variableMap as Record<string, SmsVariableSource>,
      enabled: row.enabled,
      problem: problems.length ? `${problems.join('；')}，暂不会发送` : null,
      createdAt: row.createdAt.toISOString(),
    };
  });
}

export async function listFollowUpRules(db: Database, projectId: string, owner: RuleOwner) {
  await requireOwner(db, projectId, owner);
  const rows = await db
    .select()
    .from(smsFollowUpRules)
    .where(
      and(
        eq(smsFollowUpRules.projectId, projectId),
        eq(smsFollowUpRules.ownerType, owner.ownerType),
        eq(smsFollowUpRules.ownerId, owner.ownerId),
      ),
    )
    .orderBy(asc(smsFollowUpRules.createdAt), asc(smsFollowUpRules.id));
  return toRules(rows, await signaturesAndTemplates(db, projectId, rows));
}

async function findRule(db: Database, projectId: string, ruleId: string) {
  const [row] = await db
    .select()
    .from(smsFollowUpRules)
    .where(and(eq(smsFollowUpRules.projectId, projectId), eq(smsFollowUpRules.id, ruleId)))
    .limit(1);
  if (!row) throw notFound('跟进规则不存在');
  return row;
}

/**
 * The owner, signature and template belong to the project, and every variable of the template has
 * a source. Returns the columns to store (sources of names the template does not have are dropped:
 * they are left over from another template and would only mislead).
 */
async function checkedWrite(db: Database, projectId: string, input: RuleWrite) {
  await requireOwner(db, projectId, input);
  const [[signature], [template]] = await Promise.all([
    db
      .select({ id: smsSignatures.id })
      .from(smsSignatures)
      .where(and(eq(smsSignatures.projectId, projectId), eq(smsSignatures.id, input.signatureId))),
    db
      .select({ id: smsTemplates.id, variables: smsTemplates.variables })
      .from(smsTemplates)
      .where(and(eq(smsTemplates.projectId, projectId), eq(smsTemplates.id, input.templateId))),
  ]);
  if (!signature) throw badRequest('签名：所选签名不存在');
  if (!template) throw badRequest('模板：所选模板不存在');
  const missing = template.variables.filter((name) => !input.variableMap[name]);
  if (missing.length > 0)
    throw badRequest(`变量取值：请为模板变量 ${missing.map((n) => `\${${n}}`).join('、')} 选择取值来源`);
  const variableMap = Object.fromEntries(template.variables.map((name) => [name, input.variableMap[name]!]));
  if (input.trigger !== 'requested') {
    const asked = Object.entries(variableMap).filter(([, source]) => source.from === 'assistant_text');
    if (asked.length > 0)
      throw badRequest(
        `变量取值：「助手要发送的内容」只能用于“助手请求发送”的规则（变量 ${asked.map(([n]) => `\${${n}}`).join('、')}）`,
      );
  }
  return {
    ownerType: input.ownerType,
    ownerId: input.ownerId,
    trigger: input.trigger,
    grades: input.trigger === 'grade' ? [...new Set(input.grades)].sort() : [],
    signatureId: input.signatureId,
    templateId: input.templateId,
    variableMap,
    enabled: input.enabled,
  };
}

async function oneRule(db: Database, projectId: string, row: RuleRow) {
  return toRules([row], await signaturesAndTemplates(db, projectId, [row]))[0]!;
}

export async function createFollowUpRule(
  db: Database,
  projectId: string,
  input: RuleWrite,
  now = new Date(),
) {
  const values = await checkedWrite(db, projectId, input);
  const [row] = await db
    .insert(smsFollowUpRules)
    .values({ id: randomUUID(), projectId, ...values, createdAt: now })
    .returning();
  return oneRule(db, projectId, row!);
}

export async function updateFollowUpRule(db: Database, projectId: string, ruleId: string, input: RuleWrite) {
  const existing = await findRule(db, projectId, ruleId);
  if (existing.ownerType !== input.ownerType || existing.ownerId !== input.ownerId)
    throw badRequest('规则所属的助手或任务不能修改');
  const values = await checkedWrite(db, projectId, input);
  const [row] = await db
    .update(smsFollowUpRules)
    .set(values)
    .where(and(eq(smsFollowUpRules.projectId, projectId), eq(smsFollowUpRules.id, ruleId)))
    .returning();
  return oneRule(db, projectId, row!);
}

export async function deleteFollowUpRule(db: Database, projectId: string, ruleId: string) {
  await findRule(db, projectId, ruleId);
  await db
    .delete(smsFollowUpRules)
    .where(and(eq(smsFollowUpRules.projectId, projectId), eq(smsFollowUpRules.id, ruleId)));
}
