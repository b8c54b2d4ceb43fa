import AjvCompiler from "@fastify/ajv-compiler";
import SerializerSelector from "@fastify/fast-json-stringify-compiler";
import type { FastifyInstance, FastifyServerOptions } from "fastify";

type CompilersFactory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>;

/** A compiled validator or serializer: called with the data; a validator leaves its errors on `.errors`. */
type Compiled = ((data: unknown) => unknown) & { errors?: unknown };

/**
 * What both compiler factories are, seen from here: Fastify calls one with the app's shared schemas and its
 * options, then the result once per route schema. (Their declared types tie each to its library's function
 * types; this file only wraps the functions, whatever they are.)
 */
type Factory = (externalSchemas: unknown, options: unknown) => (route: unknown) => Compiled;

/** Every app built with {@link lazySchemaCompilers}, with the compilations it has not run yet. */
const pendingOf = new WeakMap<object, Set<() => unknown>>();

/**
 * Fastify's own schema compilers (Ajv for request validation, fast-json-stringify for responses), each run on
 * the first request that needs it instead of while the app starts.
 *
 * Why: the API has about 60 routes, and compiling their schemas took about 250 ms of the 1.5-2.8 s between
 * `npm start` and the first `GET /healthz` (serializers 148 ms, validators 104 ms in a profile of a first
 * start; docs/performance.md, "First start"). A route compiles once, on its first request (a few
 * milliseconds); most processes never serve most routes (an indexer's health probe, a replica behind a
 * dashboard that calls five endpoints).
 *
 * The functions are Fastify's defaults, with the app's Ajv options: validation and serialization are what
 * they were. A schema that does not compile would now fail its first request rather than the start:
 * `compileRouteSchemas(app)` compiles them all, and a test runs it on the whole API. One difference: Fastify
 * counts compilers given this way as custom and then leaves a `headers` schema's property names as written
 * instead of lower-casing them; no route validates headers (one that does must spell them in lower case).
 */
export function lazySchemaCompilers(): {
  compilersFactory: CompilersFactory;
  /** Call once the app exists: registers it for `compileRouteSchemas`. */
  attach(app: FastifyInstance): void;
} {
  const pending = new Set<() => unknown>();
  const factories = {
    buildValidator: AjvCompiler() as unknown as Factory,
    buildSerializer: SerializerSelector() as unknown as Factory,
  };

  function lazy(build: () => Compiled): Compiled {
    let compiled: Compiled | undefined;
    const compile = (): Compiled => {
      compiled ??= build();
      pending.delete(compile);
      return compiled;
    };
    pending.add(compile);
    const run: Compiled = (data) => {
      const fn = compiled ?? compile();
      const result = fn(data);
      // Fastify reads a failed validation's errors from the function it called.
      run.errors = fn.errors;
      return result;
    };
    return run;
  }

  const deferred = (factory: Factory, wrap: (compiled: Compiled, route: unknown) => Compiled): Factory => {
    return (externalSchemas, options) => {
      const build = factory(externalSchemas, options);
      return (route) => lazy(() => wrap(build(route), route));
    };
  };
  return {
    compilersFactory: {
      buildValidator: deferred(factories.buildValidator, (validate, route) =>
        mayCoerceNumbers((route as { schema?: unknown }).schema) ? finiteOnly(validate) : validate,
      ),
      buildSerializer: deferred(factories.buildSerializer, (serialize) => serialize),
    } as unknown as CompilersFactory,
    attach: (app) => {
      pendingOf.set(app, pending);
    },
  };
}

/**
 * `validate`, failing also when the data it accepted holds a number that is not finite.
 *
 * Why: with `coerceTypes`, Ajv (8.20) turns the strings `Infinity`, `-Infinity` and `1e400` into ±Infinity
 * for an `integer` or `number` schema, accepts them as the type, and then skips `minimum` and `maximum`,
 * which it checks on finite numbers only. `?limit=Infinity` passed `maximum: 100` and reached SQL (a 500 on
 * PostgreSQL). No schema here means to accept an infinite number, and only coercion from a string lets one
 * through (a JSON number that overflows, `1e400`, parses to Infinity, which Ajv's type check refuses), so
 * checking after the fact is enough. The error reads like Ajv's own.
 */
function finiteOnly(validate: Compiled): Compiled {
  const checked: Compiled = (data) => {
    const result = validate(data);
    checked.errors = validate.errors;
    if (result !== true) return result;
    const path = nonFinitePath(data, "");
    if (path === undefined) return true;
    checked.errors = [
      {
        instancePath: path,
        schemaPath: "#",
        keyword: "type",
        params: {},
        message: "must be a finite number",
      },
    ];
    return false;
  };
  return checked;
}

/**
 * Whether a schema may coerce a string to a number: it has an `integer` or `number` type somewhere, or a
 * `$ref` (whose target is not looked at). The others (a hash, an address, a name) skip `finiteOnly`'s walk.
 */
function mayCoerceNumbers(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null) return false;
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$ref") return true;
    if (key === "type" && [value].flat().some((type) => type === "integer" || type === "number")) return true;
    if (mayCoerceNumbers(value)) return true;
  }
  return false;
}

/** The JSON pointer of the first number in `value` that is not finite, if any. */
function nonFinitePath(value: unknown, path: string): string | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? undefined : path;
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return undefined;
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinitePath(item, `${path}/${key.replaceAll("~", "~0").replaceAll("/", "~1")}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * Compile every route schema of `app` not compiled yet (after `app.ready()`, when routes are registered);
 * throws what a schema's compilation throws. Returns how many were compiled.
 */
export function compileRouteSchemas(app: FastifyInstance): number {
  const pending = pendingOf.get(app);
  if (!pending) return 0;
  const all = [...pending];
  for (const compile of all) compile();
  return all.length;
}
