const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `text` is a UUID in its usual 8-4-4-4-12 hex form, either case: what a request id is. */
export function isUuid(text: string): boolean {
  return UUID.test(text)
}
