import { fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isResourceLoadFailure, RouteErrorPage } from '../route-error-page';

const originalLocation = window.location;

function stubReload() {
  const reload = vi.fn();
  // jsdom cannot navigate; a stand-in location lets the test see the reload request.
  Object.defineProperty(window, 'location', { configurable: true, value: { ...originalLocation, reload } });
  return reload;
}

afterEach(() => {
  Object.defineProperty(window, 'location', { configurable: true, value: originalLocation });
});

function renderThrowing(error: unknown) {
  const Thrower = (): never => {
    throw error;
  };
  const router = createMemoryRouter([{ path: '/', Component: Thrower, errorElement: <RouteErrorPage /> }]);
  render(<RouterProvider router={router} />);
}

describe('route error page', () => {
  it.each([
    'Failed to fetch dynamically imported module: https://x/assets/page-abc.js',
    'error loading dynamically imported module: https://x/assets/page-abc.js',
    'Importing a module script failed.',
    "'text/html' is not a valid JavaScript MIME type.",
  ])('recognises a resource-load failure: %s', (message) => {
    expect(isResourceLoadFailure(new TypeError(message))).toBe(true);
  });

  it('does not treat other errors as resource-load failures', () => {
    expect(isResourceLoadFailure(new Error('Failed to fetch dynamically imported module'))).toBe(false);
    expect(isResourceLoadFailure(new TypeError('x is not a function'))).toBe(false);
    expect(isResourceLoadFailure('Importing a module script failed')).toBe(false);
  });

  it('shows the "updated" view for a failed chunk and reloads on 立即刷新', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const reload = stubReload();
    renderThrowing(new TypeError('Failed to fetch dynamically imported module: /assets/a.js'));

    expect(screen.getByRole('heading', { name: '页面已更新，新功能已上线' })).toBeTruthy();
    expect(screen.getByText('请刷新页面以获取最新功能和优化')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '立即刷新' }));
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('shows the generic view with the error message and reloads on 重试', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const reload = stubReload();
    renderThrowing(new Error('组件崩溃了'));

    expect(screen.getByRole('heading', { name: '出错了' })).toBeTruthy();
    expect(screen.getByText('组件崩溃了')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '重试' }));
    expect(reload).toHaveBeenCalledTimes(1);
  });

  it('falls back to 应用程序遇到了错误 when the error has no message', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    renderThrowing({});

    expect(screen.getByRole('heading', { name: '出错了' })).toBeTruthy();
    expect(screen.getByText('应用程序遇到了错误')).toBeTruthy();
  });
});
