import type { SmsReviewStatus } from '@callpilot/contracts';

/** What the server lets the user do in each state: approved is final, review must be withdrawn first. */
export const isEditable = (status: SmsReviewStatus) =>
  status === 'draft' || status === 'rejected' || status === 'withdrawn';
export const canSubmit = isEditable;
export const canWithdraw = (status: SmsReviewStatus) => status === 'reviewing';
