/**
 * Answers a list route: the whole list as a file when `format` asks for one (download.ts), its
 * groups when `group_by` does (groups.ts), else a page of rows (page.ts). Routes call this one function; the two answers never call each other.
 */
import type { AppContext, RouteDeps } from './context.ts';
import { sendDownload } from './download.ts';
import { sendGroups } from './groups.ts';
import type { ListRequest } from './list-request.ts';
import { sendPage } from './page.ts';

export async function sendList<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config' | 'logger'>, request: ListRequest<Source>): Promise<void> {
  if (request.format) return sendDownload(ctx, deps, request, request.format);
  if (request.groups) return sendGroups(ctx, deps, request, request.groups);
  return sendPage(ctx, deps, request);
}
