/**
 * FHIR's id rule, as the spec states it for ids and `_id`, less `.` and `..`: as a path segment they would
 * name another path, on this server or an upstream one.
 */
export const ID_PATTERN = /^(?!\.\.?$)[A-Za-z0-9\-.]{1,64}$/
