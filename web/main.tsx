import { render } from "preact";
import "uplot/dist/uPlot.min.css";
import "./styles.css";
import { App } from "./app.tsx";
import { loadLabels } from "./labels.ts";
import { startRouter } from "./router.ts";
import "./theme.ts";

/** Entry of the web explorer (SPEC §12): the router, the configured names, then the app. */
startRouter();
void loadLabels();
const root = document.getElementById("app");
if (root) render(<App />, root);
