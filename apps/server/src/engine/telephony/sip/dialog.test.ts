import { describe, expect, it } from 'vitest';
import { buildResponse, createRequest, Dialog, incomingDialogKey, tagOf, uriDestination } from './dialog';
import { parse, parseUri, type SipRequest, type SipResponse, serialize } from './message';

const invite = (): SipRequest =>
  createRequest('INVITE', 'sip:13800000000@carrier.example.cn', {
    from: '"呼叫中心" <sip:02160881000@10.0.0.5>;tag=ours1',
    to: '<sip:13800000000@carrier.example.cn>',
    callId: 'call-1@10.0.0.5',
    cseq: 7,
    contact: '<sip:app@10.0.0.5:5070>',
    body: Buffer.from('v=0\r\n'),
    contentType: 'application/sdp',
  });

const reply = (request: SipRequest, status: number, headers: [string, string][]): SipResponse => {
  const response = buildResponse(request, status, 'OK', { headers });
  response.headers.set('To', `${request.headers.get('To')};tag=theirs`);
  return response;
};

describe('dialog', () => {
  it('as UAC reverses Record-Route, targets the Contact and routes loosely through the first proxy', () => {
    const request = invite();
    const response = reply(request, 200, [
      ['Record-Route', '<sip:proxy2.example.cn;lr>'],
      ['Record-Route', '<sip:proxy1.example.cn:5080;lr;transport=tcp>'],
      ['Contact', '<sip:callee@192.0.2.9:5062>'],
    ]);
    const dialog = Dialog.asUac(request, response, 'udp');
    expect(dialog?.state).toBe('confirmed');
    const bye = dialog!.createRequest('BYE');
    expect(bye.request.uri).toBe('sip:callee@192.0.2.9:5062');
    expect(bye.request.headers.getAll('Route')).toEqual([
      '<sip:proxy1.example.cn:5080;lr;transport=tcp>',
      '<sip:proxy2.example.cn;lr>',
    ]);
    expect(bye.destination).toEqual({ protocol: 'tcp', address: 'proxy1.example.cn', port: 5080 });
    expect(bye.request.headers.get('CSeq')).toBe('8 BYE');
    expect(tagOf(bye.request.headers.get('To'))).toBe('theirs');
    expect(tagOf(bye.request.headers.get('From'))).toBe('ours1');
    // ACK reuses the INVITE's number.
    expect(dialog!.createRequest('ACK', { cseq: 7 }).request.headers.get('CSeq')).toBe('7 ACK');
  });

  it('sends to a strict router as the Request-URI and puts the remote target last', () => {
    const request = invite();
    const response = reply(request, 200, [
      ['Record-Route', '<sip:strict.example.cn>'],
      ['Contact', '<sip:callee@192.0.2.9>'],
    ]);
    const bye = Dialog.asUac(request, response, 'udp')!.createRequest('BYE');
    expect(bye.request.uri).toBe('sip:strict.example.cn');
    expect(bye.request.headers.getAll('Route')).toEqual(['<sip:callee@192.0.2.9>']);
    expect(bye.destination.address).toBe('strict.example.cn');
  });

  it('as UAS keeps Record-Route order, tags To and refuses out-of-order CSeq', () => {
    const incoming = parse(
      Buffer.from(
        'INVITE sip:02160881000@10.0.0.5 SIP/2.0\r\n' +
          'Via: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK1\r\n' +
          'Record-Route: <sip:p1.example.cn;lr>\r\nRecord-Route: <sip:p2.example.cn;lr>\r\n' +
          'From: <sip:13900000000@192.0.2.1>;tag=caller\r\nTo: <sip:02160881000@10.0.0.5>\r\n' +
          'Call-ID: in-1\r\nCSeq: 100 INVITE\r\nContact: <sip:13900000000@192.0.2.1:5060>\r\n' +
          'Content-Length: 0\r\n\r\n',
      ),
    );
    if (!incoming.ok || !('method' in incoming.message)) throw new Error('fixture');
    const request = incoming.message;
    const dialog = Dialog.asUas(request, 'mine', 'udp')!;
    const ok = buildResponse(request, 200, 'OK', { toTag: 'mine' });
    expect(tagOf(ok.headers.get('To'))).toBe('mine');
    expect(ok.headers.getAll('Record-Route')).toHaveLength(2);
    const bye = dialog.createRequest('BYE');
    expect(bye.request.headers.getAll('Route')).toEqual(['<sip:p1.example.cn;lr>', '<sip:p2.example.cn;lr>']);
    expect(bye.request.headers.get('To')).toBe('<sip:13900000000@192.0.2.1>;tag=caller');
    expect(bye.request.headers.get('From')).toBe('<sip:02160881000@10.0.0.5>;tag=mine');

    const later = { ...request, method: 'INFO', headers: request.headers.clone().set('CSeq', '101 INFO') };
    expect(dialog.acceptRemoteSeq(later)).toBe(true);
    const stale = { ...request, method: 'INFO', headers: request.headers.clone().set('CSeq', '99 INFO') };
    expect(dialog.acceptRemoteSeq(stale)).toBe(false);
    // The peer's in-dialog request names our tag in To and theirs in From.
    const inDialog = parse(
      serialize({
        ...bye.request,
        headers: bye.request.headers.clone().prepend('Via', 'SIP/2.0/UDP 10.0.0.5;branch=z9hG4bKx'),
      }),
    );
    expect(inDialog.ok).toBe(true);
  });

  it('keys incoming in-dialog requests by Call-ID and both tags', () => {
    const request = invite();
    request.headers.set('To', '<sip:a@b>;tag=local');
    expect(incomingDialogKey(request)).toContain('local');
    request.headers.set('To', '<sip:a@b>');
    expect(incomingDialogKey(request)).toBeNull();
  });

  it('resolves destinations with default port and transport', () => {
    expect(uriDestination(parseUri('sip:1@[2001:db8::1]')!)).toEqual({
      protocol: 'udp',
      address: '2001:db8::1',
      port: 5060,
    });
    expect(uriDestination(parseUri('sip:1@h;transport=TCP')!, 'udp').protocol).toBe('tcp');
  });
});
