/**
 * Requests Node's HTTP parser rejects before Koa sees them — a malformed request line, a NUL or
 * other invalid byte in the target, headers over Node's 16 KB limit, a request not received in
 * time — get the one error shape `{error: {code, message}, meta}` instead of Node's empty
 * 400/431/408. This is the http server's `clientError` listener, not Koa middleware: the
 * request was never parsed, so there is no route, no CORS origin and no keep-alive; a complete
 * HTTP/1.1 response is written straight on the socket and the connection closed.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { ApiError } from '../../errors.ts';
import { type Meta, toErrorBody } from '../envelope.ts';

/** How long a rejected connection may stay open for the client to read the answer. */
const LINGER_MS = 5_000;

/** Node's parser error codes → status and message (Node's own statuses, everything else 400). */
const REJECTIONS: Record<string, [status: number, message: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'The request headers are larger than 16 KB.'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: [413, 'The request chunk extensions are too large.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time.'],
};
const MALFORMED: [number, string] = [400, 'The request is not valid HTTP.'];

/** The complete response for a parser error: status line, headers, JSON body. */
export function clientErrorResponse(nodeCode: string | undefined, meta: Meta): { status: number; bytes: string } {
  const [status, message] = REJECTIONS[nodeCode ?? ''] ?? MALFORMED;
  const body = JSON.stringify(toErrorBody(new ApiError('bad_request', message, status), meta));
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'X-Content-Type-Options: nosniff',
    'Connection: close',
  ];
  return { status, bytes: `${head.join('\r\n')}\r\n\r\n${body}` };
}

/** The `clientError` listener: answers once per connection, logs one line like the request log. */
export function clientErrorHandler(meta: Meta, logger: Logger): (error: NodeJS.ErrnoException, socket: Duplex) => void {
  return (error, socket) => {
    // Node keeps feeding the failed parser what the client still sends (each chunk raises
    // this again): the answer is already on its way, and reading on is what lets the
    // connection close without a reset that could discard the answer on the client.
    if (!socket.writable) return;
    // A connection that broke, or one whose current response has started, cannot take an answer.
    const current = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (error.code === 'ECONNRESET' || current?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, bytes } = clientErrorResponse(error.code, meta);
    socket.end(bytes);
    const linger = setTimeout(() => socket.destroy(), LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
    logger.info({ status, reason: error.code }, 'request rejected by the HTTP parser');
  };
}
