import type { TaskState, WebhookCallData, WebhookEventData } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { calls } from '../../db/schema';
import type { AppSecret } from '../../lib/secret-box';
import type { CallRow } from '../calls/calls.service';
import { toSummary } from '../calls/calls.service';
import { recordingUrl } from '../calls/recording-url';
import { getTaskSummary } from '../tasks/tasks.service';
import { WebhookOutbox } from './webhook-outbox';

/**
 * What each event carries (contracts/webhook-events.ts), built from the rows the writers have
 * just written. The writers call these after their write and await them: an event is enqueued
 * in the outbox before the writer moves on, so a crash loses at most the one being written.
 */

/** A recording link in a webhook must outlive the receiver's processing and a few retries. */
export const WEBHOOK_RECORDING_URL_TTL_MS = 24 * 3600_000;

export function webhookCallData(row: CallRow): WebhookCallData {
  const { persona: _persona, ...summary } = toSummary(row);
  return summary;
}

/** The call events, for the call repository (the one writer of calls). */
export class CallWebhooks {
  constructor(
    private readonly outbox: WebhookOutbox,
    private readonly options: {
      /** Signs recording links (modules/calls/recording-url.ts). */
      secret: AppSecret;
      /** Where receivers reach this server: recording links are absolute. */
      publicUrl: string;
    },
  ) {}

  started(row: CallRow): Promise<void> {
    return this.outbox.publish(row.projectId, 'call.started', webhookCallData(row), row.startedAt);
  }

  ringing(row: CallRow, at: Date): Promise<void> {
    return this.outbox.publish(row.projectId, 'call.ringing', webhookCallData(row), at);
  }

  answered(row: CallRow): Promise<void> {
    return this.outbox.publish(
      row.projectId,
      'call.answered',
      webhookCallData(row),
      row.answeredAt ?? undefined,
    );
  }

  ended(row: CallRow): Promise<void> {
    return this.outbox.publish(row.projectId, 'call.ended', webhookCallData(row), row.endedAt ?? undefined);
  }

  /** The analysis was stored, or a human grade changed what counts. */
  analyzed(row: CallRow): Promise<void> {
    return this.outbox.publish(row.projectId, 'call.analyzed', {
      ...webhookCallData(row),
      gradeReason: row.gradeReason,
      fields: (row.fields as Record<string, string>) ?? {},
      analysisBy: row.analysisBy,
    });
  }

  recordingReady(row: CallRow): Promise<void> {
    return this.outbox.publish(row.projectId, 'call.recording_ready', async () => {
      // Signed now, on the wall clock the recordings route checks expiry against.
      const link = recordingUrl(
        this.options.secret,
        row.projectId,
        row.id,
        Date.now(),
        WEBHOOK_RECORDING_URL_TTL_MS,
      );
      return {
        callId: row.id,
        durationMs: row.recordingDurationMs ?? 0,
        recordingUrl: `${this.options.publicUrl.replace(/\/$/, '')}${link.url}`,
        recordingUrlExpiresAt: link.expiresAt,
      };
    });
  }
}

const FINISHED: readonly TaskState[] = ['completed', 'stopped'];

/**
 * A task changed state (started, paused, resumed, stopped, completed): `task.state_changed`, and
 * `task.finished` when it completed or was stopped. The counts are read once, and only when an
 * endpoint of the project receives one of the events.
 */
export async function publishTaskStateChange(
  db: Database,
  projectId: string,
  taskId: string,
  change: { from: TaskState; to: TaskState },
  at: Date,
): Promise<void> {
  const outbox = WebhookOutbox.for(db);
  let loaded: Promise<WebhookEventData<'task.state_changed'>> | undefined;
  const data = () => {
    loaded ??= getTaskSummary(db, projectId, taskId, at.getTime()).then((task) => ({
      id: task.id,
      name: task.name,
      state: task.state,
      previousState: change.from,
      counts: task.counts,
      progress: task.progress,
      startedAt: task.startedAt,
      finishedAt: task.finishedAt,
    }));
    return loaded;
  };
  await outbox.publish(projectId, 'task.state_changed', data, at);
  if (FINISHED.includes(change.to)) await outbox.publish(projectId, 'task.finished', data, at);
}

/** Where an opt-out came from, for `contact.opted_out` (the list's own `source` is coarser). */
export interface OptOutOrigin {
  source: 'call' | 'console' | 'api';
  /** The call in which the callee asked not to be called again. */
  callId?: string | null;
}

/** A number newly on the project's do-not-call list. */
export function publishOptOut(
  db: Database,
  projectId: string,
  entry: { phone: string; at: Date },
  origin: OptOutOrigin,
): Promise<void> {
  return WebhookOutbox.for(db).publish(
    projectId,
    'contact.opted_out',
    async () => {
      const [call] = origin.callId
        ? await db
            .select({ taskId: calls.taskId, contactId: calls.contactId })
            .from(calls)
            .where(eq(calls.id, origin.callId))
            .limit(1)
        : [];
      return {
        phone: entry.phone,
        source: origin.source,
        callId: origin.callId ?? null,
        taskId: call?.taskId ?? null,
        contactId: call?.contactId ?? null,
        at: entry.at.toISOString(),
      };
    },
    entry.at,
  );
}
