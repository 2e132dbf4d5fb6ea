import { describe, expect, it } from 'vitest';
import {
  acs3Authorization,
  acs3StringToSign,
  acsPercentEncode,
  canonicalQueryString,
  canonicalRequest,
  sha256Hex,
} from './aliyun-signing';

describe('ACS3-HMAC-SHA256', () => {
  // The worked example of help.aliyun.com "V3版本请求体&签名机制" (签名示例: RunInstances on
  // ecs.cn-shanghai.aliyuncs.com, YourAccessKeyId / YourAccessKeySecret, fixed date and nonce),
  // https://help.aliyun.com/zh/sdk/product-overview/v3-request-structure-and-signature
  const documented = {
    method: 'POST',
    path: '/',
    query: { RegionId: 'cn-shanghai', ImageId: 'win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd' },
    headers: {
      host: 'ecs.cn-shanghai.aliyuncs.com',
      'x-acs-action': 'RunInstances',
      'x-acs-version': '2014-05-26',
      'x-acs-date': '2023-10-26T10:22:32Z',
      'x-acs-signature-nonce': '3156853299f313e23d1673dc12e1703d',
      'x-acs-content-sha256': sha256Hex(''),
    },
    hashedPayload: sha256Hex(''),
  };

  it('reproduces the documented canonical request, string to sign and Authorization', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    const { canonical, signedHeaders } = canonicalRequest(documented);
    expect(canonical).toBe(
      [
        'POST',
        '/',
        'ImageId=win2019_1809_x64_dtc_zh-cn_40G_alibase_20230811.vhd&RegionId=cn-shanghai',
        'host:ecs.cn-shanghai.aliyuncs.com\nx-acs-action:RunInstances\n' +
          'x-acs-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n' +
          'x-acs-date:2023-10-26T10:22:32Z\nx-acs-signature-nonce:3156853299f313e23d1673dc12e1703d\n' +
          'x-acs-version:2014-05-26\n',
        'host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version',
        'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      ].join('\n'),
    );
    expect(signedHeaders).toBe(
      'host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version',
    );
    expect(acs3StringToSign(canonical)).toBe(
      'ACS3-HMAC-SHA256\n7ea06492da5221eba5297e897ce16e55f964061054b7695beedaac1145b1e259',
    );
    expect(acs3Authorization(documented, 'YourAccessKeyId', 'YourAccessKeySecret')).toBe(
      'ACS3-HMAC-SHA256 Credential=YourAccessKeyId,' +
        'SignedHeaders=host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version,' +
        'Signature=06563a9e1b43f5dfe96b81484da74bceab24a1d853912eee15083a6f0f3283c0',
    );
  });

  it('encodes as the document says: unreserved characters stay, space is %20, * is %2A, UTF-8 bytes', () => {
    expect(acsPercentEncode("a b*c~d!'()+/=:中")).toBe('a%20b%2Ac~d%21%27%28%29%2B%2F%3D%3A%E4%B8%AD');
    expect(
      canonicalQueryString({
        TemplateParam: '{"code":"1234"}',
        SignName: '阿里云 短信',
        PhoneNumbers: '13800138000',
      }),
    ).toBe(
      'PhoneNumbers=13800138000&SignName=%E9%98%BF%E9%87%8C%E4%BA%91%20%E7%9F%AD%E4%BF%A1&TemplateParam=%7B%22code%22%3A%221234%22%7D',
    );
  });

  it('signs only host, content-type and x-acs-* headers, lower-cased and trimmed', () => {
    const { signedHeaders, canonical } = canonicalRequest({
      ...documented,
      headers: { ...documented.headers, Accept: 'application/json', 'Content-Type': ' application/json ' },
    });
    expect(signedHeaders).toBe(
      'content-type;host;x-acs-action;x-acs-content-sha256;x-acs-date;x-acs-signature-nonce;x-acs-version',
    );
    expect(canonical).toContain('\ncontent-type:application/json\n');
    expect(canonical).not.toContain('accept');
  });
});
