import type { FlowNodeStats } from '@callpilot/contracts';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import dayjs from 'dayjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlowStatsControl } from '../flow-stats-control';
import { FLOW, ok, renderTool, serveFlows } from './flow-tools-fixtures';

let stop = () => {};
afterEach(() => stop());

const stats = (calls: number): FlowNodeStats => ({
  from: '2026-03-01T00:00:00.000Z',
  to: '2026-03-08T00:00:00.000Z',
  calls,
  nodes: calls ? [{ nodeId: 'menu', reached: calls, hungUp: 2 }] : [],
});

const daysIn = (params: unknown) => {
  const { from, to } = params as { from: string; to: string };
  return dayjs(to).diff(dayjs(from), 'day');
};

describe('FlowStatsControl', () => {
  it('hands the canvas the last 7 days of figures when switched on, and nothing when switched off', async () => {
    const server = serveFlows({ [`GET ${FLOW}/stats`]: ok(stats(12)) });
    stop = server.stop;
    const onStats = vi.fn();
    renderTool(<FlowStatsControl projectId="p1" flowId="f1" enabled onStats={onStats} />);

    expect(screen.getByText('仅统计已发布版本的来电')).toBeTruthy();
    expect(server.requests).toEqual([]);
    fireEvent.click(screen.getByRole('switch', { name: '显示统计' }));

    await waitFor(() => expect(onStats).toHaveBeenLastCalledWith(stats(12)));
    expect(await screen.findByText('共 12 通来电')).toBeTruthy();
    const params = server.requests[0]?.config.params as { from: string; to: string };
    expect(daysIn(params)).toBe(7);
    // Up to the midnight after today: today's calls count.
    expect(dayjs(params.to).isAfter(dayjs())).toBe(true);

    fireEvent.click(screen.getByRole('switch', { name: '显示统计' }));
    await waitFor(() => expect(onStats).toHaveBeenLastCalledWith(null));
  });

  it('says when the range has no calls, and reads again for another range', async () => {
    const server = serveFlows({ [`GET ${FLOW}/stats`]: ok(stats(0)) });
    stop = server.stop;
    renderTool(<FlowStatsControl projectId="p1" flowId="f1" enabled onStats={vi.fn()} />);
    fireEvent.click(screen.getByRole('switch', { name: '显示统计' }));
    expect(await screen.findByText('所选时间内没有来电')).toBeTruthy();

    const start = screen.getAllByRole('textbox')[0] as HTMLElement;
    fireEvent.mouseDown(start);
    fireEvent.focus(start);
    fireEvent.click(start);
    fireEvent.click(await screen.findByText('今天'));
    await waitFor(() => expect(server.requests).toHaveLength(2));
    expect(daysIn(server.requests[1]?.config.params)).toBe(1);
  });

  it('cannot be switched on before the flow is published', () => {
    const server = serveFlows({});
    stop = server.stop;
    const onStats = vi.fn();
    renderTool(<FlowStatsControl projectId="p1" flowId="f1" enabled={false} onStats={onStats} />);
    const toggle = screen.getByRole('switch', { name: '显示统计' });
    expect(toggle.hasAttribute('disabled')).toBe(true);
    fireEvent.click(toggle);
    expect(server.requests).toEqual([]);
    expect(onStats).not.toHaveBeenCalled();
  });
});
