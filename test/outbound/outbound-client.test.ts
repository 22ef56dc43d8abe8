// The outbound client on its own: the address classifier, the URL parser's normalisation of numeric
// hosts it relies on, and the redirect, size and time rules against local servers.
import dns from 'node:dns';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, getDefaultAutoSelectFamily, setDefaultAutoSelectFamily } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient, OutboundRefused } from '../../src/platform/outbound/client.js';
import { literalAddress, nonPublic } from '../../src/platform/outbound/policy.js';

describe('nonPublic', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.255.254', 'a loopback address'],
    ['0.0.0.0', 'an unspecified address'],
    ['10.0.0.1', 'a private (RFC 1918) address'],
    ['172.31.255.255', 'a private (RFC 1918) address'],
    ['192.168.0.1', 'a private (RFC 1918) address'],
    ['100.64.0.1', 'a shared (CGNAT, RFC 6598) address'],
    ['100.127.255.255', 'a shared (CGNAT, RFC 6598) address'],
    ['169.254.0.1', 'a link-local address'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['224.0.0.251', 'a multicast address'],
    ['255.255.255.255', 'a broadcast address'],
    ['240.0.0.1', 'a reserved or documentation address'],
    ['192.0.2.10', 'a reserved or documentation address'],
    ['198.51.100.10', 'a reserved or documentation address'],
    ['203.0.113.10', 'a reserved or documentation address'],
    ['198.18.0.1', 'a reserved or documentation address'],
    ['::', 'an unspecified address'],
    ['::1', 'a loopback address'],
    ['fe80::1', 'a link-local address'],
    ['fe80::1%eth0', 'a link-local address'],
    ['fc00::1', 'a unique-local (fc00::/7) address'],
    ['fd12:3456::1', 'a unique-local (fc00::/7) address'],
    ['fd00:ec2::254', 'the cloud metadata address'],
    ['ff02::1', 'a multicast address'],
    ['2001:db8::1', 'a reserved or documentation address'],
    ['::ffff:127.0.0.1', 'the IPv6 form of 127.0.0.1, a loopback address'],
    ['::ffff:a9fe:a9fe', 'the IPv6 form of 169.254.169.254, the cloud metadata address'],
    ['::7f00:1', 'the IPv6 form of 127.0.0.1, a loopback address'],
    ['::ffff:0:a00:1', 'the IPv6 form of 10.0.0.1, a private (RFC 1918) address'],
    ['64:ff9b::7f00:1', 'the IPv6 form of 127.0.0.1, a loopback address'],
    ['64:ff9b::c0a8:1', 'the IPv6 form of 192.168.0.1, a private (RFC 1918) address'],
    ['64:ff9b:1::1', 'a local-use NAT64 address'],
    ['2002:a9fe:a9fe::1', 'the IPv6 form of 169.254.169.254, the cloud metadata address'],
    ['2001:0:4136:e378::1', 'a Teredo tunnel address'],
    // ::a.b.c.d other than :: and ::1 is the IPv4-compatible form, even of an address in 0.0.0.0/8.
    ['::2', 'the IPv6 form of 0.0.0.2, an unspecified address'],
    // Ranges without a name of their own here are refused under the name ipaddr.js gives them.
    ['2001:20::1', 'a special-purpose (orchid2) address'],
    ['192.175.48.1', 'a special-purpose (as112) address'],
  ])('%s is %s', (address, kind) => {
    expect(nonPublic(address)?.kind).toBe(kind);
  });

  it('tells the cloud metadata address apart, in every form', () => {
    for (const address of ['169.254.169.254', 'fd00:ec2::254', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe']) {
      expect(nonPublic(address)?.metadata).toBe(true);
    }
    expect(nonPublic('169.254.169.253')?.metadata).toBe(false);
  });

  // Where a cloud hands out credentials besides the instance metadata address: the ECS task metadata
  // endpoint, the EKS Pod Identity agent (IPv4 and IPv6) and Alibaba Cloud's instance metadata.
  it.each(['169.254.170.2', '169.254.170.23', 'fd00:ec2::23', '100.100.100.200', '::ffff:169.254.170.2'])(
    '%s is a cloud metadata address too',
    (address) => {
      expect(nonPublic(address)?.metadata).toBe(true);
      expect(nonPublic(address)?.kind).toMatch(/the cloud metadata address$/);
    },
  );

  it('keeps the neighbours of the metadata addresses what they are (refused only where private ones are)', () => {
    expect(nonPublic('169.254.170.3')).toEqual({ kind: 'a link-local address', metadata: false });
    expect(nonPublic('100.100.100.201')).toEqual({ kind: 'a shared (CGNAT, RFC 6598) address', metadata: false });
    expect(nonPublic('fd00:ec2::24')).toEqual({ kind: 'a unique-local (fc00::/7) address', metadata: false });
  });

  it.each([
    '8.8.8.8',
    '93.184.215.14',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is public', (address) => {
    expect(nonPublic(address)).toBeUndefined();
  });

  // Each of these differs from an embedding form (mapped, compatible, SIIT, NAT64) in one group, so
  // it carries no IPv4 address: judging it by its last 32 bits (127.0.0.1 here) would refuse a public
  // address, and the same slip the other way would let a private IPv4 address through as IPv6.
  it.each([
    ['2a00::ffff:7f00:1', 'the first group is not 0 (mapped)'],
    ['0:2a00::ffff:7f00:1', 'the second group is not 0 (mapped)'],
    ['0:0:2a00::ffff:7f00:1', 'the third group is not 0 (mapped)'],
    ['0:0:0:2a00:0:ffff:7f00:1', 'the fourth group is not 0 (mapped)'],
    ['::1:ffff:7f00:1', 'the fifth group is not 0 (mapped)'],
    ['::1:0:7f00:1', 'the fifth group is not 0 (compatible)'],
    ['::5:7f00:1', 'the sixth group is neither 0 nor ffff (compatible)'],
    ['::ffff:1:7f00:1', 'the sixth group is not 0 (SIIT)'],
    ['65:ff9b::7f00:1', 'the first group is not 64 (NAT64)'],
    ['64:ff9a::7f00:1', 'the second group is not ff9b (NAT64)'],
    ['64:ff9b:0:1::7f00:1', 'the fourth group is not 0 (NAT64)'],
    ['64:ff9b::1:0:7f00:1', 'the fifth group is not 0 (NAT64)'],
    ['64:ff9b::1:7f00:1', 'the sixth group is not 0 (NAT64)'],
  ])('%s is public: %s', (address) => {
    expect(nonPublic(address)).toBeUndefined();
  });
});

describe('literalAddress (after the WHATWG URL parser)', () => {
  it.each([
    ['http://2130706433/', '127.0.0.1'],
    ['http://0x7f000001/', '127.0.0.1'],
    ['http://0x7F.0.0.1/', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1'],
    ['http://127.0.1/', '127.0.0.1'],
    ['http://127.0.0.1./', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1'],
    ['http://localhost/', undefined],
    ['http://127.0.0.1.nip.io/', undefined],
    ['http://example.com/', undefined],
  ])('%s names %s', (url, address) => {
    expect(literalAddress(new URL(url))).toBe(address);
  });
});

describe('OutboundClient', () => {
  const open = new OutboundClient({ allowPrivate: true });
  const strict = new OutboundClient({ allowPrivate: false });
  let server: Server;
  let base: string;
  const seen: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      const hops = /^\/hop\/(\d+)$/.exec(req.url ?? '');
      if (hops) {
        const left = Number(hops[1]);
        res.writeHead(302, { location: left > 0 ? `/hop/${left - 1}` : '/done' }).end();
      } else if (req.url === '/stream') {
        res.writeHead(200);
        const chunk = Buffer.alloc(64 * 1024, 'a');
        for (let i = 0; i < 20; i++) res.write(chunk);
        res.end();
      } else if (req.url === '/hang') {
        res.writeHead(200);
        res.write('partial');
      } else res.end(`${req.method} ${req.url}`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  it('follows same-origin redirects of a GET, at most three', async () => {
    const followed = await open.request(`${base}/hop/2`);
    expect([followed.status, followed.body.toString()]).toEqual([200, 'GET /done']);
    const stopped = await open.request(`${base}/hop/5`);
    expect(stopped.status).toBe(302);
    expect(stopped.headers.location).toBe('/hop/1');
  });

  it('follows no redirect of a POST', async () => {
    seen.length = 0;
    const answer = await open.request(`${base}/hop/0`, { method: 'POST', body: '{}' });
    expect(answer.status).toBe(302);
    expect(seen).toEqual(['POST /hop/0']);
  });

  it('caps the size of an answer sent in chunks, without a content-length', async () => {
    expect((await open.request(`${base}/stream`, { maxBytes: 2 * 1024 * 1024 })).body.length).toBe(20 * 64 * 1024);
    await expect(open.request(`${base}/stream`, { maxBytes: 1024 * 1024 })).rejects.toThrow('the answer is larger than 1048576 bytes');
  });

  it('gives up on an answer that does not end in time', async () => {
    const started = Date.now();
    await expect(open.request(`${base}/hang`, { timeoutMs: 300 })).rejects.toThrow('no complete answer within 300 ms');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it("stops when the caller says so, and keeps its own time limit beside the caller's", async () => {
    const caller = new AbortController();
    setTimeout(() => caller.abort(), 100);
    await expect(open.request(`${base}/hang`, { signal: caller.signal, timeoutMs: 10_000 })).rejects.toThrow('stopped by the caller');
    const patient = new AbortController().signal;
    await expect(open.request(`${base}/hang`, { signal: patient, timeoutMs: 300 })).rejects.toThrow('no complete answer within 300 ms');
  });

  it('names each call to tracing by its method, with the server it goes to', async () => {
    const calls: [string, Record<string, unknown>][] = [];
    const traced = new OutboundClient(
      { allowPrivate: true },
      {
        outbound: (name, attributes, work) => {
          calls.push([name, attributes]);
          return work({});
        },
      },
    );
    await traced.request(`${base}/traced`);
    await traced.request(`${base}/traced`, { method: 'POST', body: '{}' });
    const host = new URL(base).host;
    expect(calls).toEqual([
      ['GET', { 'http.request.method': 'GET', 'server.address': host }],
      ['POST', { 'http.request.method': 'POST', 'server.address': host }],
    ]);
  });

  it('tells a URL it cannot read apart from a refused one', () => {
    expect(open.urlRefusal('not a url')).toBe('is not a URL');
    expect(strict.urlRefusal('http://[::1')).toBe('is not a URL');
  });

  it("fails with the resolver's error for a name that does not resolve (.invalid never does)", async () => {
    await expect(open.request('http://svc-outbound-test.invalid/')).rejects.toThrow(/ENOTFOUND|EAI_AGAIN/);
  });

  it('gives a socket that asks for one address (autoSelectFamily off) one checked address', async () => {
    const port = new URL(base).port;
    const autoSelect = getDefaultAutoSelectFamily();
    const order = dns.getDefaultResultOrder();
    // Process-wide settings, put back below; ipv4first because the test server listens on 127.0.0.1 only.
    setDefaultAutoSelectFamily(false);
    dns.setDefaultResultOrder('ipv4first');
    try {
      expect((await open.request(`http://localhost:${port}/one-address`)).body.toString()).toBe('GET /one-address');
      await expect(strict.request(`http://localhost:${port}/`)).rejects.toThrow(
        /^refused: localhost resolves to 127\.0\.0\.1, a loopback address/,
      );
    } finally {
      setDefaultAutoSelectFamily(autoSelect);
      dns.setDefaultResultOrder(order);
    }
  });

  it('calls http and https only', async () => {
    for (const url of ['file:///etc/passwd', 'ftp://example.com/', 'data:,hello', 'gopher://127.0.0.1:25/']) {
      await expect(open.request(url)).rejects.toThrow(new OutboundRefused('must be an http or https URL'));
    }
  });

  it('speaks TLS to an https URL', async () => {
    // A bare TCP server: the first bytes the client sends are a TLS handshake record (type 22).
    const firstBytes: Buffer[] = [];
    const tcp = createTcpServer((socket) =>
      socket.once('data', (data) => {
        firstBytes.push(data);
        socket.destroy();
      }),
    );
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    try {
      await expect(open.request(`https://127.0.0.1:${(tcp.address() as { port: number }).port}/`)).rejects.toThrow();
      expect(firstBytes[0]?.[0]).toBe(0x16);
    } finally {
      tcp.close();
    }
  });

  it('refuses a name that resolves to a refused address, before connecting', async () => {
    seen.length = 0;
    const port = new URL(base).port;
    await expect(strict.request(`http://localhost:${port}/`)).rejects.toThrow(/^refused: localhost resolves to \S+, a loopback address/);
    await expect(strict.request(`http://0x7f000001:${port}/`)).rejects.toBeInstanceOf(OutboundRefused);
    expect(seen).toEqual([]);
    expect((await open.request(`http://localhost:${port}/named`)).body.toString()).toBe('GET /named');
  });
});
