/** The not-found page (`not-found`): an unknown path, or a hash or address protoscan does not know. */
export function NotFoundPage({ what }: { what?: string }) {
  return (
    <section data-testid="not-found" class="not-found">
      <h1>Not found</h1>
      <p>{what ?? "There is no page at this address."}</p>
      <p>
        Try the search box above, or go <a href="/">back to the explorer's home page</a>.
      </p>
    </section>
  );
}
