import { randomUUID } from 'node:crypto';
import type { SmsSender } from '../../../providers';
import type { SmsProviderClient } from './types';

/** The outbox is given the rendered text (it has no templates of its own) as this parameter. */
export const OUTBOX_CONTENT_PARAM = '__content';

/**
 * 开发发件箱: the default provider. Nothing leaves the machine: the rendered text lands in the
 * development outbox (`npm run admin -- outbox`) and the message counts as delivered at once, so a
 * project can try every flow before it has an SMS account. Review is the platform operator's
 * (`npm run admin -- sms:review`), so the review methods are never asked.
 */
export function createOutboxSmsClient(sender: SmsSender): SmsProviderClient {
  const notReviewedHere = async (): Promise<never> => {
    throw new Error('the development outbox has no review API: use npm run admin -- sms:review');
  };
  return {
    kind: 'outbox',
    maxRequestsPerSecond: 1000,
    async send(request) {
      const text = request.params.find((p) => p.name === OUTBOX_CONTENT_PARAM)?.value ?? '';
      await sender.send({
        to: request.phone,
        text,
        meta: { template: request.templateCode, signName: request.signName, smsId: request.outId },
      });
      return { ok: true, providerMessageId: `outbox-${randomUUID()}` };
    },
    async sendBatch(templateCode, items) {
      const results = [];
      for (const item of items) results.push(await this.send({ ...item, templateCode }));
      return results;
    },
    async querySendDetails(phone, providerMessageId, sentAt) {
      return {
        providerMessageId,
        phone,
        outId: null,
        status: 'delivered',
        errorCode: null,
        errorMessage: null,
        reportedAt: sentAt,
      };
    },
    submitSignature: notReviewedHere,
    querySignature: notReviewedHere,
    submitTemplate: notReviewedHere,
    queryTemplate: notReviewedHere,
  };
}
