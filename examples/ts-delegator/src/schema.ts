// A small JSON Schema validator: the subset this example supports for `artifact_spec.schema`
// (type, enum, const, required, properties, additionalProperties: false, items, minItems,
// maxItems, minLength, maxLength, minimum, maximum). Keywords outside the subset are ignored;
// the README says so.

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(want: string, v: unknown): boolean {
  const t = typeOf(v);
  return want === t || (want === "number" && t === "integer");
}

/** Returns null when `value` satisfies `schema`, else where and why it does not. */
export function validateSchema(schema: unknown, value: unknown, at = ""): string | null {
  if (schema === true || schema === undefined || schema === null) return null;
  if (schema === false) return `${at || "/"}: no value is allowed`;
  if (typeof schema !== "object" || Array.isArray(schema)) return null;
  const s = schema as Record<string, unknown>;
  const here = at || "/";
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!types.some((t) => typeMatches(t, value))) return `${here}: expected ${types.join(" or ")}, got ${typeOf(value)}`;
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return `${here}: not one of the enumerated values`;
  }
  if ("const" in s && JSON.stringify(s.const) !== JSON.stringify(value)) return `${here}: not the constant value`;
  if (typeof value === "string") {
    const len = [...value].length;
    if (typeof s.minLength === "number" && len < s.minLength) return `${here}: shorter than minLength ${s.minLength}`;
    if (typeof s.maxLength === "number" && len > s.maxLength) return `${here}: longer than maxLength ${s.maxLength}`;
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) return `${here}: below minimum ${s.minimum}`;
    if (typeof s.maximum === "number" && value > s.maximum) return `${here}: above maximum ${s.maximum}`;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === "number" && value.length < s.minItems) return `${here}: fewer than minItems ${s.minItems}`;
    if (typeof s.maxItems === "number" && value.length > s.maxItems) return `${here}: more than maxItems ${s.maxItems}`;
    if (s.items !== undefined) {
      for (let i = 0; i < value.length; i++) {
        const p = validateSchema(s.items, value[i], `${at}/${i}`);
        if (p) return p;
      }
    }
  }
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (Array.isArray(s.required)) {
      for (const k of s.required as string[]) if (!(k in obj)) return `${here}: missing required property ${JSON.stringify(k)}`;
    }
    const props = (s.properties ?? {}) as Record<string, unknown>;
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) {
        const p = validateSchema(props[k], v, `${at}/${k}`);
        if (p) return p;
      } else if (s.additionalProperties === false) {
        return `${here}: property ${JSON.stringify(k)} is not allowed`;
      }
    }
  }
  return null;
}
