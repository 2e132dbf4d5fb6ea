import { type AxiosAdapter, AxiosError, type InternalAxiosRequestConfig } from 'axios';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fileNameOf, getBlob, RequestError } from '..';
import { http } from '../request-client';

const previousAdapter = http.defaults.adapter;
let seen: InternalAxiosRequestConfig[] = [];

// A browser hands a blob request its body as a Blob, error answers included; so does this adapter.
function answer(status: number, body: string, headers: Record<string, string>): void {
  const adapter: AxiosAdapter = async (config) => {
    seen.push(config);
    const response = {
      data: new Blob([body], { type: headers['content-type'] }),
      status,
      statusText: '',
      headers,
      config,
    };
    if (status >= 400) {
      throw new AxiosError(
        `Request failed with status code ${status}`,
        AxiosError.ERR_BAD_REQUEST,
        config,
        null,
        response,
      );
    }
    return response;
  };
  http.defaults.adapter = adapter;
}

beforeEach(() => {
  seen = [];
  localStorage.setItem('token', 'tok-1');
  vi.spyOn(toast, 'error');
});

afterEach(() => {
  http.defaults.adapter = previousAdapter;
});

describe('getBlob', () => {
  it('downloads the file with the token and reads its Chinese name', async () => {
    answer(200, '问题,答案\r\n', {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="export.csv"; filename*=UTF-8''${encodeURIComponent('售后问答.csv')}`,
    });

    const file = await getBlob('/api/project/p1/knowledge-bases/kb1/export', { params: { format: 'csv' } });

    expect(file.fileName).toBe('售后问答.csv');
    expect(await file.blob.text()).toBe('问题,答案\r\n');
    expect(seen[0]?.headers.get('Authorization')).toBe('Bearer tok-1');
    expect(seen[0]?.responseType).toBe('blob');
    expect(seen[0]?.params).toEqual({ format: 'csv' });
  });

  it('reports the server message of a failed download', async () => {
    answer(
      404,
      JSON.stringify({ success: false, status: 404, data: null, message: '知识库不存在', code: 'NOT_FOUND' }),
      {
        'content-type': 'application/json',
      },
    );

    const error = await getBlob('/api/project/p1/knowledge-bases/x/export').catch(
      (reason: unknown) => reason,
    );

    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).message).toBe('知识库不存在');
    expect(toast.error).toHaveBeenCalledWith('知识库不存在', { id: '知识库不存在' });
  });

  it('reads plain and missing Content-Disposition names', () => {
    expect(fileNameOf('attachment; filename="kb.md"')).toBe('kb.md');
    expect(fileNameOf(undefined)).toBeUndefined();
  });
});
