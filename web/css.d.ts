/** Stylesheets imported for their effect: esbuild bundles them into the one CSS file of the build. */
declare module "*.css";
