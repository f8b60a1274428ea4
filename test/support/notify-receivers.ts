// Local receivers for notification tests (loopback only): an HTTP server that records every request and
// answers what the test says, and a real SMTP server (smtp-server) that records every mail.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The status this request was answered with. */
  status: number;
}

export interface HttpReceiver {
  url: string;
  requests: Received[];
  /** Decides each answer; default 200. */
  answer: (r: Omit<Received, 'status'>) => number;
  close(): Promise<void>;
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const rec: HttpReceiver = { url: '', requests: [], answer: () => 200, close: async () => {} };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { path: req.url ?? '/', headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() };
      const status = rec.answer(r);
      rec.requests.push({ ...r, status });
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status < 300 ? 'ok' : 'receiver says no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  rec.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  rec.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return rec;
}

export interface Mail {
  from: string;
  to: string[];
  data: string;
}

export interface SmtpReceiver {
  port: number;
  mails: Mail[];
  close(): Promise<void>;
}

/** A plain SMTP server on loopback (no TLS, no auth), as a local relay would be. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const mails: Mail[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), data: Buffer.concat(chunks).toString() });
        callback(null, 'Message queued as test-1' as never);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
