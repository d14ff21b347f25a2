/**
 * The explorer: a client of the public `/v1` routes (nothing private), served by the gateway at
 * /explorer/. Its whole state is the URL hash; this module maps the hash to a view and draws
 * the header (search box, navigation) around it.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { PinnedBanner } from './components/pinned.tsx';
import { SearchBox } from './components/search-box.tsx';
import { BattlePage, BattlesPage } from './pages/battles.tsx';
import { EntityPage } from './pages/entity.tsx';
import { EventsPage } from './pages/events.tsx';
import { KillmailsPage } from './pages/killmails.tsx';
import { RecordPage } from './pages/record.tsx';
import { SearchPage } from './pages/search.tsx';
import { StatusPage } from './pages/status.tsx';
import { formatHash, parseHash, type Route } from './route.ts';
import './styles.css';

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

function View({ route }: { route: Route }) {
  const { view, id, sub, params } = route;
  if (view === 'entities' && id) return <EntityPage key={id} id={id} params={params} />;
  if (view === 'events' && !id) return <EventsPage params={params} />;
  if (view === 'killmails' && !id) return <KillmailsPage params={params} />;
  if (view === 'battles') return id ? <BattlePage key={id} id={id} params={params} /> : <BattlesPage params={params} />;
  if (view === 'status') return <StatusPage />;
  if (id && ['events', 'killmails', 'sources', 'artefacts', 'chain-objects'].includes(view)) return <RecordPage key={`${view}/${id}/${sub}`} view={view} id={id} {...(sub ? { sub } : {})} />;
  return <SearchPage params={params} />;
}

const NAV = [
  ['search', 'Entities'],
  ['events', 'Events'],
  ['killmails', 'Killmails'],
  ['battles', 'Battles'],
  ['status', 'Status'],
] as const;

function App() {
  const route = useRoute();
  useEffect(() => {
    document.getElementById('main')?.focus({ preventScroll: true });
    scrollTo(0, 0);
  }, [route.view, route.id]);
  const scope = { environment: route.params.environment ?? '', cycles: route.params.cycles ?? '' };
  return (
    <>
      <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), document.getElementById('main')?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={formatHash('search')}>
          Registry explorer
        </a>
        <SearchBox scope={scope} initial={route.view === 'search' ? (route.params.q ?? '') : ''} />
        <nav aria-label="Views">
          {NAV.map(([view, label]) => (
            <a key={view} href={formatHash(view)} aria-current={route.view === view ? 'page' : undefined}>
              {label}
            </a>
          ))}
          <a href="/docs/">API reference</a>
        </nav>
      </header>
      <PinnedBanner route={route} />
      <main id="main" tabIndex={-1}>
        <View route={route} />
      </main>
      <footer class="muted small">
        Every value comes from this gateway's public <code>/v1</code> routes; see the <a href="/docs/">API reference</a>.
      </footer>
    </>
  );
}

render(<App />, document.getElementById('app')!);
// First render done: the browser tests and `npm run` measurements read this mark.
performance.mark('explorer-rendered');
