/**
 * Answers a list route: its groups when `group_by` asks for them (groups.ts), else a page of
 * rows (page.ts). Routes call this one function; the two answers never call each other.
 */
import type { AppContext, RouteDeps } from './context.ts';
import { sendGroups } from './groups.ts';
import type { ListRequest } from './list-request.ts';
import { sendPage } from './page.ts';

export async function sendList<Source>(ctx: AppContext, deps: Pick<RouteDeps, 'search' | 'meta' | 'config'>, request: ListRequest<Source>): Promise<void> {
  if (request.groups) return sendGroups(ctx, deps, request, request.groups);
  return sendPage(ctx, deps, request);
}
