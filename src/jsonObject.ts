/** A parsed JSON object: what FHIR input is before anything about it is checked. */
export type JsonObject = Record<string, unknown>

/** Whether a parsed JSON value is an object (not an array, not null). */
export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
