// The request's multipart methods (isMultipart, files) are declared by the plugin's types.
import type {} from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors';
import { textProblem, textProblemRule } from './safe-text';

export interface ReceivedFile {
  /** The form field the file came in. */
  field: string;
  fileName: string;
  bytes: Buffer;
  /** The multipart reader stopped at the size limit. */
  truncated: boolean;
}

/**
 * Reads the files of a multipart request (the route's registered limits bound them). The parser
 * throws plain errors for what a broken or hostile client sends (no boundary, a body cut short,
 * a part without headers), which would otherwise surface as 500s; here they become 400s naming
 * the upload field. A file name that PostgreSQL would refuse (NUL, a lone surrogate) is refused
 * too, as the input guard refuses it in JSON. `tooManyFiles` is the route's answer to its limit.
 */
export async function receiveFiles(
  req: FastifyRequest,
  { field, tooManyFiles }: { field: string; tooManyFiles: () => Error },
): Promise<ReceivedFile[]> {
  const files: ReceivedFile[] = [];
  try {
    for await (const part of req.files()) {
      const bytes = await part.toBuffer();
      files.push({ field: part.fieldname, fileName: part.filename, bytes, truncated: part.file.truncated });
    }
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'FST_FILES_LIMIT') throw tooManyFiles();
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') {
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', `字段 ${field}：表单项过多`);
    }
    req.log.info({ err }, 'malformed multipart body');
    throw new AppError(
      400,
      'VALIDATION_FAILED',
      `字段 ${field}：上传内容不完整或格式不正确，请重新选择文件上传`,
    );
  }
  for (const file of files) {
    const problem = textProblem(file.fileName);
    if (problem)
      throw new AppError(400, 'VALIDATION_FAILED', `字段 ${field}：文件名${textProblemRule[problem]}`);
  }
  return files;
}
