import type { FastifyRequest } from 'fastify';
import { badRequest } from '../../lib/errors';
import { receiveFiles } from '../../lib/multipart';
import { type ContactSheet, parseContactFile } from './import-parse';

/**
 * The one contact file of a multipart upload (field `file`), parsed: what a task's contact import
 * and an SMS batch both receive, with the same refusals.
 */
export async function receiveContactFile(
  req: FastifyRequest,
): Promise<{ fileName: string; sheet: ContactSheet }> {
  if (!req.isMultipart()) throw badRequest('请以 multipart/form-data 方式上传文件（字段 file）');
  const files = await receiveFiles(req, {
    field: 'file',
    tooManyFiles: () => badRequest('字段 file：一次只能上传一个文件'),
  });
  const file = files.find((f) => f.field === 'file');
  if (!file) throw badRequest('字段 file：请选择要上传的文件');
  return {
    fileName: file.fileName,
    sheet: await parseContactFile(file.fileName, file.bytes, file.truncated),
  };
}
