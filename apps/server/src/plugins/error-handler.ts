import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { AppError, codeForStatus, statusText } from '../lib/errors';
import { fail } from '../lib/reply';

const where: Record<string, string> = {
  body: '请求体',
  querystring: '查询参数',
  params: '路径参数',
  headers: '请求头',
};

/**
 * One place decides what a failure looks like to a caller. Validation problems name the
 * field and the rule in Chinese; anything unexpected becomes a bare 500 whose details stay
 * in the log, keyed by the request id.
 */
export function registerErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (hasZodFastifySchemaValidationErrors(err)) {
      const context = where[err.validationContext ?? 'body'] ?? '请求';
      const lines = err.validation.map((v) => {
        const field = v.instancePath.replace(/^\//, '').replaceAll('/', '.');
        return field ? `字段 ${field}：${v.message}` : `${context}：${v.message}`;
      });
      return reply.code(400).send(fail(400, 'VALIDATION_FAILED', lines.join('；')));
    }
    if (err instanceof AppError) {
      // A 5xx of ours (a mail server down) is the operator's to fix: keep its cause in the log.
      if (err.statusCode >= 500) req.log.error({ err: err.cause ?? err }, err.message);
      return reply.code(err.statusCode).send(fail(err.statusCode, err.code, err.message));
    }
    if (isResponseSerializationError(err)) {
      req.log.error({ err, issues: err.cause.issues }, 'response did not match its schema');
      return reply.code(500).send(fail(500, 'INTERNAL', statusText[500]!));
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    if (status >= 500) {
      req.log.error({ err }, 'request failed');
      const text = statusText[status] ?? statusText[500]!;
      return reply.code(status).send(fail(status, codeForStatus(status), text));
    }
    // Framework 4xx (malformed JSON, oversized body, wrong content type): say which in Chinese.
    const text =
      err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
        ? '请求体不是合法的 JSON'
        : (statusText[status] ?? '请求失败');
    req.log.info({ code: err.code, status }, 'request rejected');
    return reply.code(status).send(fail(status, codeForStatus(status), text));
  });
}
