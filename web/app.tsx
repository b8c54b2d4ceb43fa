import { useEffect, useRef } from "preact/hooks";
import { SearchBox } from "./components/SearchBox.tsx";
import { ThemeToggle } from "./components/ThemeToggle.tsx";
import { AddressPage } from "./pages/Address.tsx";
import { BlockPage } from "./pages/Block.tsx";
import { HomePage } from "./pages/Home.tsx";
import { NotFoundPage } from "./pages/NotFound.tsx";
import { ProtocolPage } from "./pages/Protocol.tsx";
import { SearchPage } from "./pages/Search.tsx";
import { TokenPage } from "./pages/Token.tsx";
import { TxPage } from "./pages/Tx.tsx";
import { here, matchRoute, type Route } from "./router.ts";

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "home":
      return <HomePage />;
    case "tx":
      return <TxPage hash={route.hash} />;
    case "address":
      return <AddressPage address={route.address} />;
    case "token":
      return <TokenPage address={route.address} />;
    case "protocol":
      return <ProtocolPage id={route.id} />;
    case "block":
      return <BlockPage number={route.number} />;
    case "search":
      return <SearchPage />;
    case "notFound":
      return <NotFoundPage />;
  }
}

const TITLES: Record<Route["page"], string> = {
  home: "Explorer",
  tx: "Transaction",
  address: "Address",
  token: "Token",
  protocol: "Protocol",
  block: "Block",
  search: "Search",
  notFound: "Not found",
};

/** The frame of every page: header with the search box and the theme toggle, the page, a footer. */
export function App() {
  const path = here.value.path;
  const route = matchRoute(path);
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  useEffect(() => {
    document.title = `${TITLES[route.page]} · protoscan`;
    // After a navigation inside the app, keyboard and screen-reader users start at the new page.
    if (!first.current) main.current?.focus({ preventScroll: true });
    first.current = false;
  }, [path]);
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href="/">
          protoscan
        </a>
        <SearchBox />
        <ThemeToggle />
      </header>
      <main id="main" ref={main} tabIndex={-1}>
        <Page key={path} route={route} />
      </main>
      <footer class="bottom">
        <a href="/docs">API reference</a> · <a href="/openapi.json">OpenAPI</a> · protoscan indexes the
        configured protocols only
      </footer>
    </>
  );
}
