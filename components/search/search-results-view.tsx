import Link from "next/link";
import type { SearchView } from "@/lib/adapters/console/search/search";
import { pluralize } from "@/lib/adapters/console/shared/format";
import { EmptyState } from "@/components/empty-state";
import { RelativeTime } from "@/components/relative-time";
import "@/components/search/search.css";

/** /search?q=: every kind's hits for the query, grouped, each a link to its page. */
export function SearchResultsView({
  query,
  result,
  error,
}: {
  query: string;
  result: SearchView | null;
  /** Why the query was not run (too short), in words. */
  error: string | null;
}) {
  return (
    <>
      <header className="page-header">
        <div className="page-header__row">
          <h1>Search</h1>
        </div>
        <p className="lede">
          Task ids, intents, execution ids, idempotency keys, actors and, for people cleared for restricted data,
          customer ids. Press <kbd>/</kbd> anywhere to search from the header.
        </p>
      </header>
      <form method="get" action="/search" className="filters" role="search" aria-label="Search everything">
        <div className="field">
          <label htmlFor="search-page-q">Search for</label>
          <input
            id="search-page-q"
            name="q"
            type="search"
            defaultValue={query}
            minLength={2}
            maxLength={200}
            required
            aria-describedby={error ? "search-page-error" : undefined}
            aria-invalid={error ? true : undefined}
          />
        </div>
        <div className="filters__actions">
          <button type="submit" className="button button--primary">
            Search
          </button>
        </div>
      </form>
      {error ? (
        <p id="search-page-error" className="field-error" role="alert">
          {error}
        </p>
      ) : null}
      {result ? <Results result={result} /> : null}
    </>
  );
}

function Results({ result }: { result: SearchView }) {
  return (
    <div className="search-results" data-testid="search-results">
      <p className="search-results__count" role="status">
        {result.total === 0
          ? `Nothing matches “${result.query}”.`
          : `${pluralize(result.total, "result")} for “${result.query}”.`}
      </p>
      {result.total === 0 ? (
        <EmptyState title="No results">
          <p>
            Ids and keys are matched from their start (paste a whole id for an exact match), intents and actors by any
            part, customers by their whole id.
          </p>
        </EmptyState>
      ) : null}
      {result.groups.map((group) => (
        <section key={group.kind} className="search-group" aria-labelledby={`search-group-${group.kind}`}>
          <h2 id={`search-group-${group.kind}`}>
            {group.label} <span className="search-group__count">{group.hits.length}</span>
          </h2>
          <ul className="search-hits">
            {group.hits.map((hit) => (
              <li key={`${hit.href}-${hit.value}`}>
                <Link href={hit.href} className="search-hit">
                  <span className="search-hit__value mono">{hit.label}</span>
                  <span className="search-hit__detail">{hit.detail}</span>
                </Link>
                {hit.at ? <RelativeTime value={hit.at} /> : null}
              </li>
            ))}
          </ul>
          {group.more ? <p className="hint">More match: type more of the id or key to narrow it down.</p> : null}
        </section>
      ))}
      {result.notSearched.map((n) => (
        <p key={n.kind} className="hint" data-testid={`search-not-searched-${n.kind}`}>
          <strong>{n.label}:</strong> {n.why}
        </p>
      ))}
    </div>
  );
}
