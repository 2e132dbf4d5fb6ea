import type { CodeSent, SmsCaptchaRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';

export function sendSmsCaptcha(body: SmsCaptchaRequest): Promise<CodeSent> {
  return post<CodeSent>('/auth/sms-captcha', body);
}

export function useSendSmsCaptcha({ onSuccess }: { onSuccess?: (sent: CodeSent) => void } = {}) {
  return useMutation({ mutationFn: sendSmsCaptcha, onSuccess });
}
