import { SMS_VARIABLE_MAX_LENGTH, type SmsMessage, type SmsVariableSource } from '@callpilot/contracts';
import { and, eq, or } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls, smsFollowUpRules, smsMessages } from '../../db/schema';
import type { CallSmsRequest } from '../../engine/call/ports';
import { AppError } from '../../lib/errors';
import { enqueueFreeText, enqueueSms, recordUnsendable } from './sms-send.service';

/**
 * The SMS of a call, all through the SMS module's queue: the assistant's send_sms (its 'requested'
 * rules, or a free-text record when it has none), a flow's 发送短信 node (free text) and, once the
 * call is analysed, the 'grade' rules of its assistant and task. A rule sends at most once per call,
 * so analysing a call again does not text the customer again.
 */

type CallRow = typeof calls.$inferSelect;
type RuleRow = typeof smsFollowUpRules.$inferSelect;

/** Where each template variable's value comes from, read from the call (cut to what a vendor takes). */
export function ruleVariables(
  map: Record<string, SmsVariableSource>,
  call: Pick<CallRow, 'variables' | 'contactName' | 'direction' | 'callerNumber' | 'calleeNumber'>,
  assistantText = '',
): Record<string, string> {
  const callVariables = (call.variables ?? {}) as Record<string, unknown>;
  const lineNumber = call.direction === 'outbound' ? call.callerNumber : call.calleeNumber;
  const resolve = (source: SmsVariableSource): string => {
    switch (source.from) {
      case 'call_variable': {
        const value = callVariables[source.name];
        return value === undefined || value === null ? '' : String(value);
      }
      case 'contact_name':
        return call.contactName ?? '';
      case 'line_number':
        return lineNumber;
      case 'assistant_text':
        return assistantText;
      case 'fixed':
        return source.value;
    }
  };
  return Object.fromEntries(
    Object.entries(map).map(([name, source]) => [
      name,
      resolve(source).trim().slice(0, SMS_VARIABLE_MAX_LENGTH),
    ]),
  );
}

async function loadCall(db: Database, projectId: string, callId: string) {
  const [call] = await db
    .select()
    .from(calls)
    .where(and(eq(calls.projectId, projectId), eq(calls.id, callId)))
    .limit(1);
  return call ?? null;
}

/** The enabled rules of the call's assistant and of its task with this trigger. */
async function rulesOf(db: Database, call: CallRow, trigger: 'grade' | 'requested') {
  const owners = [
    call.assistantId
      ? and(eq(smsFollowUpRules.ownerType, 'assistant'), eq(smsFollowUpRules.ownerId, call.assistantId))
      : undefined,
    call.taskId
      ? and(eq(smsFollowUpRules.ownerType, 'task'), eq(smsFollowUpRules.ownerId, call.taskId))
      : undefined,
  ].filter((o) => o !== undefined);
  if (owners.length === 0) return [];
  return db
    .select()
    .from(smsFollowUpRules)
    .where(
      and(
        eq(smsFollowUpRules.projectId, call.projectId),
        eq(smsFollowUpRules.enabled, true),
        eq(smsFollowUpRules.trigger, trigger),
        or(...owners),
      ),
    )
    .orderBy(smsFollowUpRules.createdAt, smsFollowUpRules.id);
}

async function alreadySent(db: Database, call: CallRow, rule: RuleRow) {
  const [row] = await db
    .select({ id: smsMessages.id })
    .from(smsMessages)
    .where(
      and(
        eq(smsMessages.projectId, call.projectId),
        eq(smsMessages.callId, call.id),
        eq(smsMessages.ruleId, rule.id),
      ),
    )
    .limit(1);
  return Boolean(row);
}

/** The customer's number: who was called, or who called in. */
const customerOf = (call: CallRow) => (call.direction === 'outbound' ? call.calleeNumber : call.callerNumber);

export interface CallSmsOptions {
  /** A rule that cannot send (template no longer approved, a variable without a value) is reported here. */
  onError?: (err: unknown, context: string) => void;
  now?: () => Date;
}

async function sendByRules(
  db: Database,
  call: CallRow,
  rules: RuleRow[],
  source: 'follow_up' | 'assistant',
  to: string,
  assistantText: string,
  options: CallSmsOptions,
) {
  const sent: SmsMessage[] = [];
  let handled = 0;
  for (const rule of rules) {
    if (await alreadySent(db, call, rule)) {
      handled++;
      continue;
    }
    try {
      sent.push(
        await enqueueSms(
          db,
          {
            projectId: call.projectId,
            phone: to,
            signatureId: rule.signatureId,
            templateId: rule.templateId,
            variables: ruleVariables(
              rule.variableMap as Record<string, SmsVariableSource>,
              call,
              assistantText,
            ),
            source,
            callId: call.id,
            taskId: call.taskId,
            ruleId: rule.id,
          },
          options.now?.(),
        ),
      );
      handled++;
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      // Recorded as 未发送 with the reason: the operator finds it in 发送记录 and fixes the rule.
      sent.push(
        await recordUnsendable(
          db,
          {
            projectId: call.projectId,
            phone: to,
            signatureId: rule.signatureId,
            templateId: rule.templateId,
            source,
            callId: call.id,
            taskId: call.taskId,
            ruleId: rule.id,
            reason: `跟进规则未能发送：${err.message}`,
          },
          options.now?.(),
        ),
      );
      handled++;
    }
  }
  return { sent, handled };
}

/** A call's SMS request (the engine's PostCallActions.sendSms). */
export async function sendCallSms(
  db: Database,
  request: CallSmsRequest,
  options: CallSmsOptions = {},
): Promise<SmsMessage[]> {
  const call = await loadCall(db, request.projectId, request.callId);
  const content = request.variables.content;
  if (request.template === 'flow_sms' || !call) {
    const source = request.template === 'flow_sms' ? 'flow' : 'assistant';
    return [
      await enqueueFreeText(
        db,
        {
          projectId: request.projectId,
          phone: request.to,
          content,
          source,
          callId: request.callId,
          taskId: call?.taskId,
        },
        options.now?.(),
      ),
    ];
  }
  const rules = await rulesOf(db, call, 'requested');
  const { sent, handled } = await sendByRules(db, call, rules, 'assistant', request.to, content, options);
  if (handled > 0) return sent;
  // No rule could take it: the request is still recorded (and sent by the development outbox).
  return [
    await enqueueFreeText(
      db,
      {
        projectId: call.projectId,
        phone: request.to,
        content,
        source: 'assistant',
        callId: call.id,
        taskId: call.taskId,
      },
      options.now?.(),
    ),
  ];
}

/**
 * After a call is analysed: the 'grade' rules of its assistant and task whose grades hold the call's
 * grade (the human one when someone re-graded it). At most one SMS per (call, rule).
 */
export async function sendFollowUpSms(
  db: Database,
  target: { projectId: string; callId: string },
  options: CallSmsOptions = {},
): Promise<SmsMessage[]> {
  const call = await loadCall(db, target.projectId, target.callId);
  const grade = call ? (call.humanGrade ?? call.intentGrade ?? call.machineGrade) : null;
  if (!call || !grade) return [];
  const rules = (await rulesOf(db, call, 'grade')).filter((rule) => rule.grades.includes(grade));
  if (rules.length === 0) return [];
  const { sent } = await sendByRules(db, call, rules, 'follow_up', customerOf(call), '', options);
  return sent;
}
