import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sseChunks, startFakeFetch } from '@/test/fake-fetch';
import { FlowTestCallDialog } from '../flow-test-call-dialog';
import { FLOW, ok, renderTool, serveFlows } from './flow-tools-fixtures';

let stop = () => {};
afterEach(() => stop());

const stepBox = (n: number) => screen.getByRole('textbox', { name: `第 ${n} 步` });

describe('FlowTestCallDialog (模拟来电)', () => {
  it('places the draft call with the script in its order and links to the call record', async () => {
    const fetches = startFakeFetch(() => ({
      status: 200,
      chunks: sseChunks([{ type: 'answered', callId: 'c7', answeredAt: '2026-03-01T02:00:03.000Z' }]),
    }));
    const server = serveFlows({ [`POST ${FLOW}/test-call`]: ok({ callId: 'c7' }) });
    stop = server.stop;
    const router = renderTool(<FlowTestCallDialog open projectId="p1" flowId="f1" onClose={vi.fn()} />);

    expect(await screen.findByText(/留空则由模拟客户自行应答/)).toBeTruthy();
    for (let n = 0; n < 3; n++) fireEvent.click(screen.getByRole('button', { name: /添加一步/ }));
    fireEvent.change(stepBox(1), { target: { value: '1' } });
    fireEvent.change(stepBox(2), { target: { value: '我的宽带断了' } });
    fireEvent.change(stepBox(3), { target: { value: '挂机' } });
    const steps = screen.getByRole('list', { name: '模拟输入' });
    expect(within(steps).getByText('按键')).toBeTruthy();
    expect(within(steps).getByText('说话')).toBeTruthy();
    // The caller speaks before pressing 1; the hang-up goes.
    fireEvent.click(screen.getByRole('button', { name: '上移第 2 步' }));
    fireEvent.click(screen.getByRole('button', { name: '删除第 3 步' }));
    expect([stepBox(1), stepBox(2)].map((box) => (box as HTMLInputElement).value)).toEqual([
      '我的宽带断了',
      '1',
    ]);
    fireEvent.change(screen.getByRole('textbox', { name: '主叫号码' }), { target: { value: '13900001111' } });

    fireEvent.click(screen.getByRole('button', { name: '开始模拟' }));

    const link = await screen.findByRole('link', { name: '查看通话记录' });
    expect(link.getAttribute('href')).toBe('/call-record/detail/c7');
    expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.body)).toEqual([
      { callerNumber: '13900001111', script: ['我的宽带断了', '1'] },
    ]);
    expect(await screen.findByText('模拟来电已发起，结束后可在通话记录中查看')).toBeTruthy();
    await waitFor(() => expect(fetches.requests.some((r) => r.url.includes('callId=c7'))).toBe(true));

    fireEvent.click(link);
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/detail/c7'));
  });

  it('refuses a caller number that is not a mobile number, and places nothing', async () => {
    const server = serveFlows({});
    stop = server.stop;
    renderTool(<FlowTestCallDialog open projectId="p1" flowId="f1" onClose={vi.fn()} />);
    fireEvent.change(await screen.findByRole('textbox', { name: '主叫号码' }), {
      target: { value: '12345' },
    });
    fireEvent.click(screen.getByRole('button', { name: '开始模拟' }));
    expect(await screen.findByText('主叫号码须为 11 位手机号')).toBeTruthy();
    expect(server.requests).toEqual([]);
  });
});
