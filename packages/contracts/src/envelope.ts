import { z } from 'zod';

/**
 * Every HTTP answer of the API, success or failure, has this shape. The console's request
 * client reads `error`, then `message`, then `msg` for the text it shows, so an error answer
 * fills all three with the same human (Chinese) sentence; `code` is for programs.
 */
export const ErrorCode = z.enum([
  'VALIDATION_FAILED',
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'INVALID_CREDENTIALS',
  'FORBIDDEN',
  'PROJECT_DISABLED',
  'NOT_FOUND',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'RATE_LIMITED',
  'CODE_INVALID',
  'LIMIT_REACHED',
  'INTERNAL',
  'SERVICE_UNAVAILABLE',
  /** A service we depend on (e.g. the OpenID provider) failed or refused; answered with 502. */
  'UPSTREAM_FAILED',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const errorEnvelope = z
  .object({
    success: z.literal(false),
    status: z.number().int(),
    data: z.null(),
    message: z.string(),
    msg: z.string(),
    error: z.string(),
    code: ErrorCode,
  })
  .meta({ id: 'ErrorEnvelope' });
export type ErrorEnvelope = z.infer<typeof errorEnvelope>;

export function envelope<T extends z.ZodType>(data: T) {
  return z.object({
    success: z.literal(true),
    status: z.number().int(),
    data,
    message: z.string(),
    msg: z.string(),
    error: z.null(),
  });
}

export type Envelope<T> = {
  success: true;
  status: number;
  data: T;
  message: string;
  msg: string;
  error: null;
};
