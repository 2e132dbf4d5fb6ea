import { act, render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { startLoading, stopLoading } from '@/lib/request/loading-counter';
import { TopProgressBar } from '../top-progress-bar';

describe('TopProgressBar', () => {
  it('shows while any counted call is in flight and hides when all are done', () => {
    render(<TopProgressBar />);
    expect(screen.queryByRole('progressbar')).toBeNull();

    act(() => {
      startLoading();
      startLoading();
    });
    expect(screen.getByRole('progressbar', { name: '加载中' })).toBeTruthy();

    act(() => stopLoading());
    expect(screen.getByRole('progressbar')).toBeTruthy();

    act(() => stopLoading());
    expect(screen.queryByRole('progressbar')).toBeNull();
  });
});
