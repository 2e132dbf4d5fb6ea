import { Button, Result, Spin } from 'antd';
import { useEffect, useRef } from 'react';
import { useNavigate, useSearchParams } from 'react-router';
import { paths } from '@/config/paths';
import { safeRedirect } from '@/lib/safe-redirect';
import { useCompleteOidcLogin } from '../api/complete-oidc-login';

const DEFAULT_FAILURE = '第三方登录失败，请重试';

/** Where the identity provider sends the visitor back: trade the one-time code for a session. */
export function ThirdLoginPage() {
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const code = searchParams.get('code');
  const state = searchParams.get('state');
  const issuer = searchParams.get('iss');
  const providerError = searchParams.get('error');

  const complete = useCompleteOidcLogin({
    onSuccess: (result) => navigate(safeRedirect(result.redirect), { replace: true }),
  });

  // The authorization code is single-use: a second exchange (StrictMode's double effect, a
  // re-render) would fail and replace the success with an error.
  const exchanged = useRef(false);
  useEffect(() => {
    if (exchanged.current || providerError || !code || !state) return;
    exchanged.current = true;
    complete.mutate(issuer ? { code, state, iss: issuer } : { code, state });
  }, [code, state, issuer, providerError, complete.mutate]);

  const failure = providerError
    ? (searchParams.get('error_description') ?? providerError)
    : !code || !state
      ? '登录回调缺少必要参数'
      : complete.isError
        ? complete.error.message || DEFAULT_FAILURE
        : undefined;

  return (
    <main className="flex min-h-full items-center justify-center bg-gray-50 px-4">
      {failure ? (
        <Result
          status="error"
          title="第三方登录失败"
          subTitle={failure}
          extra={
            <Button type="primary" onClick={() => navigate(paths.login, { replace: true })}>
              返回登录
            </Button>
          }
        />
      ) : (
        <div role="status" className="flex flex-col items-center gap-4 text-gray-600">
          <Spin size="large" />
          <span>正在登录...</span>
        </div>
      )}
    </main>
  );
}
