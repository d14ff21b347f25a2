/**
 * A moto S3 server for tests, benchmarks and the rehearsal, with SigV4 and IAM enforced:
 * moto_server starts on a free loopback port with INITIAL_NO_AUTH_ACTION_COUNT=3, and exactly
 * three unauthenticated IAM calls (CreateUser, PutUserPolicy allowing s3:*, CreateAccessKey) make
 * the key every later request must sign with — so a wrong secret is a real 403
 * SignatureDoesNotMatch.
 *
 * moto_server comes from PyPI (`moto[server]`; .ci/run installs it where it is missing).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { AwsV4Signer } from 'aws4fetch';
import type { StoreConfig } from '../src/config.ts';
import { type ObjectStore, type ObjectStoreOptions, createObjectStore } from '../src/store/object-store.ts';

/** Unauthenticated actions moto allows before it checks every signature: the three setup calls. */
const SETUP_ACTIONS = 3;
const REGION = 'us-east-1';

export interface MotoServer {
  endpoint: string;
  /** The server's process (a bench reads the CPU it used). */
  pid: number;
  /** The environment a loader or gateway process reads (AWS_* names). */
  env: Record<string, string>;
  /** The settings src/config.ts would make of `env` (with `overrides`, e.g. a wrong secret). */
  config(overrides?: Partial<StoreConfig['credentials'] & object>): StoreConfig;
  store(overrides?: Partial<StoreConfig['credentials'] & object>, options?: ObjectStoreOptions): ObjectStore;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function listening(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`moto_server exited (${child.exitCode}):\n${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(true));
      socket.once('error', () => resolve(false));
      socket.once('connect', () => socket.destroy());
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`moto_server did not listen on ${port} within 60 s:\n${output()}`);
}

/** One IAM query-API call, signed with a throwaway key: moto routes it by the signature's service and, within the setup count, checks nothing. */
async function iam(endpoint: string, params: Record<string, string>): Promise<string> {
  const body = new URLSearchParams({ ...params, Version: '2010-05-08' }).toString();
  const signer = new AwsV4Signer({
    url: `${endpoint}/`,
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
    accessKeyId: 'setup',
    secretAccessKey: 'setup',
    service: 'iam',
    region: REGION,
  });
  const signed = await signer.sign();
  const response = await fetch(signed.url, { method: 'POST', headers: signed.headers, body });
  const text = await response.text();
  if (!response.ok) throw new Error(`IAM ${params.Action}: ${response.status} ${text}`);
  return text;
}

export async function startMoto(): Promise<MotoServer> {
  const port = await freePort();
  let log = '';
  const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', String(port)], {
    env: { ...process.env, INITIAL_NO_AUTH_ACTION_COUNT: String(SETUP_ACTIONS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawned) throw new Error(`moto_server could not start (${spawned.message}): pip install "moto[server]" (.ci/run does)`);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await listening(port, child, () => log);
    await iam(endpoint, { Action: 'CreateUser', UserName: 'loader' });
    const policy = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }] };
    await iam(endpoint, { Action: 'PutUserPolicy', UserName: 'loader', PolicyName: 's3-all', PolicyDocument: JSON.stringify(policy) });
    const key = await iam(endpoint, { Action: 'CreateAccessKey', UserName: 'loader' });
    const accessKeyId = /<AccessKeyId>([^<]+)</.exec(key)?.[1];
    const secretAccessKey = /<SecretAccessKey>([^<]+)</.exec(key)?.[1];
    if (!accessKeyId || !secretAccessKey) throw new Error(`CreateAccessKey answered no key: ${key}`);

    const config = (overrides = {}): StoreConfig => ({
      credentials: { accessKeyId, secretAccessKey, ...overrides },
      region: REGION,
      endpoint,
      timeoutMs: 10_000,
      attempts: 4,
    });
    const store = (overrides = {}, options: ObjectStoreOptions = {}) => createObjectStore(config(overrides), { backoff: { baseMs: 20, maxMs: 500 }, ...options });
    return {
      endpoint,
      pid: child.pid!,
      env: { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_REGION: REGION, AWS_ENDPOINT_URL_S3: endpoint },
      config,
      store,
      async createBucket(name) {
        await store().put(`s3://${name}/`, Buffer.alloc(0), { contentType: 'application/octet-stream' });
      },
      stop: () => stop(child),
    };
  } catch (error) {
    await stop(child);
    throw error;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}
