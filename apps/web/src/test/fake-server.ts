import {
  type AxiosAdapter,
  AxiosError,
  type AxiosInstance,
  type AxiosResponse,
  type InternalAxiosRequestConfig,
} from 'axios';
import { http } from '@/lib/request/request-client';

export type FakeReply = { status: number; body?: unknown } | 'network-error';

export type RecordedRequest = {
  method: string;
  url: string;
  headers: Record<string, unknown>;
  body: unknown;
  config: InternalAxiosRequestConfig;
};

/**
 * Answers the request client's calls at the transport boundary (its axios adapter), so the
 * interceptors, envelope handling and error policy all run for real.
 */
export function startFakeServer(
  handle: (request: RecordedRequest) => FakeReply | Promise<FakeReply>,
  instance: AxiosInstance = http,
) {
  const requests: RecordedRequest[] = [];
  const previousAdapter = instance.defaults.adapter;

  const adapter: AxiosAdapter = async (config) => {
    const request: RecordedRequest = {
      method: (config.method ?? 'get').toUpperCase(),
      url: config.url ?? '',
      headers: config.headers.toJSON(),
      body: typeof config.data === 'string' && config.data !== '' ? JSON.parse(config.data) : config.data,
      config,
    };
    requests.push(request);
    const reply = await handle(request);
    if (reply === 'network-error') {
      throw new AxiosError('Network Error', AxiosError.ERR_NETWORK, config);
    }
    const response: AxiosResponse = {
      data: reply.body === undefined ? '' : JSON.stringify(reply.body),
      status: reply.status,
      statusText: '',
      headers: { 'content-type': 'application/json' },
      config,
    };
    if (config.validateStatus && !config.validateStatus(reply.status)) {
      throw new AxiosError(
        `Request failed with status code ${reply.status}`,
        reply.status >= 500 ? AxiosError.ERR_BAD_RESPONSE : AxiosError.ERR_BAD_REQUEST,
        config,
        null,
        response,
      );
    }
    return response;
  };

  instance.defaults.adapter = adapter;
  return {
    requests,
    stop: () => {
      instance.defaults.adapter = previousAdapter;
    },
  };
}

export function ok<T>(data: T): FakeReply {
  return { status: 200, body: { success: true, status: 200, data, message: 'ok', msg: 'ok', error: null } };
}

export function failure(status: number, message: string, code = 'BAD_REQUEST'): FakeReply {
  return {
    status,
    body: { success: false, status, data: null, message, msg: message, error: message, code },
  };
}
