import { describe, expect, it } from 'vitest';
import { axisPick, itemPick } from '@/components/drill-chart-picks';
import { bucketDrill, heatCellDrill, trendDrill } from '../utils/report-chart-drills';
import { drillHref } from '../utils/report-range';

const OFFERED = {
  from: '2026-11-17T16:00:00.000Z',
  to: '2026-11-24T15:59:59.999Z',
  direction: 'inbound',
  status: 'ended',
};

describe('chart drill-downs', () => {
  it('reads an item click as its series and data item, and nothing off the series', () => {
    expect(itemPick({ componentType: 'series', seriesIndex: 1, dataIndex: 3 })).toEqual({
      seriesIndex: 1,
      dataIndex: 3,
    });
    expect(itemPick({ componentType: 'xAxis', seriesIndex: 0, dataIndex: 0 })).toBeNull();
    expect(itemPick({ componentType: 'series' })).toBeNull();
  });

  it('reads a click in a line chart as the column and the line nearest to the pointer', () => {
    const series = [{ data: [10, 12, 3] }, { data: [8, 9, 1] }, { data: [0, 1, 0] }];
    expect(axisPick(series, 1.2, 11)).toEqual({ seriesIndex: 0, dataIndex: 1 });
    expect(axisPick(series, 0.6, 8.4)).toEqual({ seriesIndex: 1, dataIndex: 1 });
    expect(axisPick(series, 2, 0.2)).toEqual({ seriesIndex: 2, dataIndex: 2 });
    // Past the last column it is the last one; a chart without data has nothing to open.
    expect(axisPick(series, 7, 3)).toEqual({ seriesIndex: 0, dataIndex: 2 });
    expect(axisPick([{ data: [] }], 0, 0)).toBeNull();
    // A gap in a line (null) is never the nearest.
    expect(axisPick([{ data: [null, 0.5] }, { data: [0.9, 0.9] }], 0, 0.1)).toEqual({
      seriesIndex: 1,
      dataIndex: 0,
    });
  });

  it('narrows a figure’s drill to one hour or one China day of its trend, to the last millisecond', () => {
    expect(bucketDrill(OFFERED, '2026-11-18T01:00:00.000Z', 'hour')).toEqual({
      ...OFFERED,
      from: '2026-11-18T01:00:00.000Z',
      to: '2026-11-18T01:59:59.999Z',
    });
    // A China day starts at 16:00 UTC the day before.
    expect(bucketDrill(OFFERED, '2026-11-17T16:00:00.000Z', 'day')).toEqual({
      ...OFFERED,
      from: '2026-11-17T16:00:00.000Z',
      to: '2026-11-18T15:59:59.999Z',
    });
    expect(bucketDrill(null, '2026-11-17T16:00:00.000Z', 'day')).toBeNull();
  });

  it('maps a click on a trend line to the list URL of that line’s figure in that bucket', () => {
    const series = {
      granularity: 'hour' as const,
      points: [
        { at: '2026-11-18T01:00:00.000Z', values: { offered: 10, answered: 8, abandoned: 1 } },
        { at: '2026-11-18T02:00:00.000Z', values: { offered: 12, answered: 9, abandoned: 2 } },
      ],
    };
    const drill = trendDrill(series, [
      { drill: OFFERED },
      { drill: { ...OFFERED, answered: 'yes' } },
      { drill: null },
    ]);
    const target = drill({ seriesIndex: 1, dataIndex: 1 });
    expect(target && drillHref(target)).toBe(
      `/call-record/list?${new URLSearchParams({
        ...OFFERED,
        answered: 'yes',
        from: '2026-11-18T02:00:00.000Z',
        to: '2026-11-18T02:59:59.999Z',
      })}`,
    );
    // A line with no list filter, or a point that is not there, opens nothing.
    expect(drill({ seriesIndex: 2, dataIndex: 0 })).toBeNull();
    expect(drill({ seriesIndex: 0, dataIndex: 5 })).toBeNull();
  });

  it('maps a heat-map cell to its one hour while the range holds each weekday once', () => {
    // 2026-11-18 is a Wednesday (3); 09:00 China time is 01:00 UTC.
    const week = { from: '2026-11-18', to: '2026-11-24' };
    expect(heatCellDrill(OFFERED, week, { weekday: 3, hour: 9 })).toEqual({
      ...OFFERED,
      from: '2026-11-18T01:00:00.000Z',
      to: '2026-11-18T01:59:59.999Z',
    });
    // Monday 00:00 China time is Sunday 16:00 UTC.
    expect(heatCellDrill(OFFERED, week, { weekday: 1, hour: 0 })).toMatchObject({
      from: '2026-11-22T16:00:00.000Z',
      to: '2026-11-22T16:59:59.999Z',
    });
    // A weekday the range does not hold, or a range where a cell is several days, opens nothing.
    expect(
      heatCellDrill(OFFERED, { from: '2026-11-18', to: '2026-11-19' }, { weekday: 1, hour: 9 }),
    ).toBeNull();
    expect(
      heatCellDrill(OFFERED, { from: '2026-11-01', to: '2026-11-24' }, { weekday: 3, hour: 9 }),
    ).toBeNull();
  });
});
