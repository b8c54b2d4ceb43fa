import { describe, expect, test } from "vitest";
import { isReservedPath } from "./routes/webApp.ts";
import { pickEncoding, type WebAsset } from "./webAssets.ts";

const asset: WebAsset = {
  body: Buffer.from("plain"),
  gzip: Buffer.from("gz"),
  brotli: Buffer.from("br"),
  contentType: "text/javascript; charset=utf-8",
  immutable: true,
};

describe("pickEncoding", () => {
  test("default: brotli first, then gzip, then the plain file", () => {
    expect(pickEncoding(asset, "gzip, deflate, br").encoding).toBe("br");
    expect(pickEncoding(asset, "gzip").encoding).toBe("gzip");
    expect(pickEncoding(asset, "*").encoding).toBe("gzip");
    expect(pickEncoding(asset, undefined)).toEqual({ body: asset.body, encoding: null });
    expect(pickEncoding(asset, "identity").encoding).toBeNull();
  });

  test("args: q=0 refuses an encoding; a file built without variants is sent plain", () => {
    expect(pickEncoding(asset, "br;q=0, gzip").encoding).toBe("gzip");
    expect(pickEncoding(asset, "br;q=0.0, gzip;q=0").encoding).toBeNull();
    expect(pickEncoding({ ...asset, brotli: undefined as never }, "br").encoding).toBeNull();
  });
});

describe("isReservedPath", () => {
  test("default: the API's, docs' and operations' paths are not the app's", () => {
    for (const path of [
      "/api",
      "/api/",
      "/api/tx/0x1",
      "/v2/api",
      "/ws",
      "/docs",
      "/docs/json",
      "/openapi.json",
    ])
      expect(isReservedPath(path), path).toBe(true);
    for (const path of ["/healthz", "/readyz", "/metrics", "/metrics/x"])
      expect(isReservedPath(path), path).toBe(true);
  });

  test("default: every other path is the app's, look-alikes included", () => {
    for (const path of [
      "/",
      "/tx/0x1",
      "/apis",
      "/api-docs",
      "/wsx",
      "/documents",
      "/v2",
      "/v2/apix",
      "/metricsx",
    ])
      expect(isReservedPath(path), path).toBe(false);
  });
});
