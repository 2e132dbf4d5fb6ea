import { describe, expect, it } from 'vitest';
import { isOwnDemoMock } from './flow-http';

describe('what flows’ HTTP nodes may call on this server', () => {
  it('the demo’s mock endpoint on loopback at PORT or at PUBLIC_BASE_URL, nothing else of it', () => {
    const allowed = isOwnDemoMock({ PORT: 3000, PUBLIC_BASE_URL: 'https://call.example.com' });
    const check = (url: string) => allowed(new URL(url));
    expect(check('http://127.0.0.1:3000/api/demo-mock/broadband/bill?phone=138')).toBe(true);
    expect(check('http://localhost:3000/api/demo-mock/broadband/bill')).toBe(true);
    expect(check('http://[::1]:3000/api/demo-mock/broadband/bill')).toBe(true);
    expect(check('https://call.example.com/api/demo-mock/broadband/bill')).toBe(true);
    // The rest of the server, another port (another service on the host), dot segments.
    expect(check('http://127.0.0.1:3000/api/project/p1/calls')).toBe(false);
    expect(check('http://127.0.0.1:5432/api/demo-mock/x')).toBe(false);
    expect(check('http://127.0.0.1:3000/api/demo-mock/../project/p1/calls')).toBe(false);
    expect(check('http://127.0.0.1:3000/api/demo-mock/%2e%2e/project/p1')).toBe(false);
    expect(check('http://10.0.0.5:3000/api/demo-mock/broadband/bill')).toBe(false);
    expect(
      isOwnDemoMock({ PORT: 3000, PUBLIC_BASE_URL: undefined })(
        new URL('https://call.example.com/api/demo-mock/x'),
      ),
    ).toBe(false);
  });
});
