export { RegistryClient, Walk, createRegistryClient } from './client.ts';
export type { Answer, BundleNamed, ClientOptions, ListPage, ListPath, ListQuery, ListRequest, Params, Path, RequestOf, Row, Schemas, StreamEvent, StreamOptions, StreamPath, StreamRow, WalkPath, WalkQuery } from './client.ts';
export { RegistryError } from './errors.ts';
export type { RetryOptions } from './retry.ts';
export type { components, operations, paths } from './schema.ts';
