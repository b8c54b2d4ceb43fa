import Type from "typebox";
import { Settings } from "typebox/system";
import Value from "typebox/value";
import { expect, test } from "vitest";
import { formatValidationErrors } from "./formatValidationErrors.ts";

const Schema = Type.Object(
  {
    when: Type.Union([Type.Integer(), Type.String({ pattern: "^latest$" })]),
    mode: Type.Union([Type.Literal("a"), Type.Literal("b")]),
    code: Type.String({ pattern: "^[A-Z]+$", "x-error": "must be upper-case letters" }),
    name: Type.String({ minLength: 3, maxLength: 5 }),
    list: Type.Array(Type.Boolean(), { minItems: 2, maxItems: 3 }),
    map: Type.Record(Type.String(), Type.Number({ maximum: 10 })),
    ratio: Type.Number({ exclusiveMaximum: 1 }),
  },
  { additionalProperties: false },
);

function format(value: unknown): string[] {
  const previous = Settings.Get().maxErrors;
  Settings.Set({ maxErrors: 100 });
  try {
    return formatValidationErrors(Schema, value, Value.Errors(Schema, value));
  } finally {
    Settings.Set({ maxErrors: previous });
  }
}

const valid = {
  when: 1,
  mode: "a",
  code: "AB",
  name: "abcd",
  list: [true, false],
  map: { x: 1 },
  ratio: 0.5,
};

test("default: a valid value has no lines", () => {
  expect(format(valid)).toEqual([]);
});

test("behavior: union without literals", () => {
  expect(format({ ...valid, when: "soon" })).toEqual(["when: does not match any of the allowed forms"]);
});

test("behavior: x-error replaces the validator's message", () => {
  expect(format({ ...valid, code: "ab" })).toEqual(["code: must be upper-case letters"]);
});

test("behavior: length and size limits", () => {
  expect(format({ ...valid, name: "ab", list: [true] })).toEqual([
    "name: must have at least 3 characters",
    "list: must have at least 2 items",
  ]);
  expect(format({ ...valid, name: "abcdef", list: [true, true, true, true] })).toEqual([
    "name: must have at most 5 characters",
    "list: must have at most 3 items",
  ]);
});

test("behavior: record values are named by their key", () => {
  expect(format({ ...valid, map: { "0": 11, "a.b": "x" } })).toEqual([
    'map["0"]: must be <= 10',
    'map["a.b"]: must be a number',
  ]);
});

test("behavior: exclusive maximum, booleans, several missing keys", () => {
  expect(format({ ...valid, ratio: 1, list: [1, true] })).toEqual([
    "list[0]: must be true or false",
    "ratio: must be < 1",
  ]);
  expect(format({ when: 1, code: "A", name: "abc", list: [true, true], ratio: 0 })).toEqual([
    "mode: is required",
    "map: is required",
  ]);
});
