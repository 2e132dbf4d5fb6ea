import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import nodemailer from 'nodemailer';
import type { Database } from '../db/client';
import { outbox } from '../db/schema';
import type { Env } from '../env';

export interface EmailMessage {
  to: string;
  subject: string;
  text: string;
}
export interface SmsMessage {
  to: string;
  text: string;
  /** For an SMS a call asked for: its template, the template's values and the call. */
  meta?: Record<string, unknown>;
}

export interface EmailSender {
  send(message: EmailMessage): Promise<void>;
}
export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

export interface Providers {
  email: EmailSender;
  sms: SmsSender;
}

export const outboxFile = (dataDir: string) => path.join(dataDir, 'outbox.jsonl');

export interface OutboxEntry {
  id: string;
  channel: 'email' | 'sms';
  recipient: string;
  subject: string;
  body: string;
  createdAt: string;
}

/**
 * Development outbox: the database row is what `npm run admin -- outbox` reads; the JSON line
 * beside it exists because the embedded database is held by the running server, and an
 * operator still needs to read a code while it runs.
 */
export class Outbox {
  constructor(
    private readonly db: Database,
    private readonly dataDir: string,
    private readonly log?: Pick<FastifyBaseLogger, 'info'>,
  ) {}

  async put(
    channel: 'email' | 'sms',
    recipient: string,
    subject: string,
    body: string,
    meta?: Record<string, unknown>,
  ) {
    const entry: OutboxEntry = {
      id: randomUUID(),
      channel,
      recipient,
      subject,
      body,
      createdAt: new Date().toISOString(),
    };
    await this.db
      .insert(outbox)
      .values({ ...entry, meta: meta ?? null, createdAt: new Date(entry.createdAt) });
    await fs.promises.mkdir(this.dataDir, { recursive: true });
    await fs.promises.appendFile(outboxFile(this.dataDir), `${JSON.stringify(entry)}\n`, { mode: 0o600 });
    // The body holds codes and reset links: only the fact of queuing is logged.
    this.log?.info({ channel }, 'message queued in development outbox (npm run admin -- outbox)');
  }

  email(): EmailSender {
    return { send: (m) => this.put('email', m.to, m.subject, m.text) };
  }

  sms(): SmsSender {
    return {
      send: (m) =>
        this.put('sms', m.to, m.meta?.template ? `模板 ${String(m.meta.template)}` : '', m.text, m.meta),
    };
  }
}

export function smtpEmailSender(url: string, from: string): EmailSender {
  const transport = nodemailer.createTransport(url);
  return {
    async send({ to, subject, text }) {
      await transport.sendMail({ from, to, subject, text });
    },
  };
}

/** Real senders where configured, the development outbox otherwise. SMS carriers come later. */
export function providersFromEnv(
  env: Env,
  db: Database,
  log?: Pick<FastifyBaseLogger, 'info'>,
  given: Partial<Providers> = {},
): Providers {
  const box = new Outbox(db, env.dataDir, log);
  return {
    email: given.email ?? (env.SMTP_URL ? smtpEmailSender(env.SMTP_URL, env.SMTP_FROM) : box.email()),
    sms: given.sms ?? box.sms(),
  };
}

/** Keeps every message in memory, for tests. */
export function captureProviders() {
  const emails: EmailMessage[] = [];
  const sms: SmsMessage[] = [];
  const providers: Providers = {
    email: { send: async (m) => void emails.push(m) },
    sms: { send: async (m) => void sms.push(m) },
  };
  return { providers, emails, sms };
}
